package chart

import (
	"slices"

	"gonum.org/v1/gonum/stat"
)

// Line is a fitted y = A + B·x drawn from X0 to X1.
type Line struct{ A, B, X0, X1 float64 }

// LeastSquares fits y = a + b·x by ordinary least squares (gonum's
// stat.LinearRegression) over the x range of the points; ok is false with
// fewer than two distinct x.
func LeastSquares(xs, ys []float64) (Line, bool) {
	if len(xs) < 2 || slices.Min(xs) == slices.Max(xs) {
		return Line{}, false
	}
	a, b := stat.LinearRegression(xs, ys, nil, false)
	return Line{a, b, slices.Min(xs), slices.Max(xs)}, true
}
