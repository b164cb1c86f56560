// Package svgchart draws the line and bar charts of strata's HTML reports
// (the sampler's report and the long-tail experiment) as inline SVG.
//
// The charts are written here rather than by a library so that a report is
// one self-contained file: no scripts, no fonts, no external assets. A
// chart is a plain struct (frame, axes, series) whose Write appends one
// <svg> element to a strings.Builder; the page includes CSS once, which
// styles every chart by class (grid, axis, ref, tick, label, legend,
// title). Nothing here keeps state between charts and nothing starts a
// goroutine.
//
// Axes map values to pixels linearly or on a log10 or log2 scale, and
// choose about five round ticks (Step) unless the caller lists them.
package svgchart
