//go:build race

package itlmetricsconnector

// raceEnabled: the race detector drops pooled objects and allocates on its own, so allocation
// counts mean nothing under it.
const raceEnabled = true
