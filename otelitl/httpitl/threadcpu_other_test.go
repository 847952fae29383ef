//go:build !linux

package httpitl

import "time"

func threadCPU() (time.Duration, bool) { return 0, false }
