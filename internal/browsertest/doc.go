// Package browsertest starts Debian's headless Chromium for tests and
// drives it with chromedp, the way an operator's browser loads strata's
// admin page.
//
// Start returns a browser context whose tab lives until the test ends; the
// Chromium process, its temporary profile and the chromedp goroutines are
// owned by the test and stopped by t.Cleanup. Console messages at error
// level, uncaught exceptions and the browser's own error log entries are
// collected from the moment the tab exists and read with Errors.
//
// Without a chromium binary the test is skipped, except under CI=true,
// where it fails: CI installs Debian's chromium package (.ci/deps), so a
// missing one is a broken setup, not a reason to pass.
package browsertest
