// Package top is `strata ctl top`: the page's headline figures in a
// terminal, redrawn every second, for an operator on a host with no
// browser.
//
// Data flow: Run polls the admin API (the time series, the promotion
// settings, the tiers and the busiest sampled keys) through Client, folds
// the replies into a Frame, and writes Render's text to the output. Render
// is a pure function of the Frame, so its layout is tested with fixed
// figures. With ANSI on, each frame starts by moving the cursor home and
// clearing the screen; off (output not a terminal) frames follow each
// other as plain text. No curses library, no terminal database.
//
// Goroutines: none. Run loops on the caller's goroutine until its context
// ends or Count frames were drawn.
package top
