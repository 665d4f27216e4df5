//go:build !amd64 || purego

package hexout

// eachLoop calls f with the one block loop this build has.
func eachLoop(f func(name string)) { f("pairs") }
