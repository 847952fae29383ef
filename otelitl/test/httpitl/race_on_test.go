//go:build race

package httpitl_test

// raceOn scales the attacks' volumes down under the race detector, which slows parsing tenfold.
const raceOn = true
