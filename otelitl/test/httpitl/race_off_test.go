//go:build !race

package httpitl_test

const raceOn = false
