//go:build !race

package itlmetricsconnector

const raceEnabled = false
