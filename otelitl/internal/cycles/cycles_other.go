//go:build !amd64

package cycles

// Now returns 0: this architecture has no counter this package reads. [Usable] reports false.
func Now() int64 { return 0 }

const supported = false
