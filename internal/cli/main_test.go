package cli

import (
	"os"
	"testing"
)

// TestMain lets this test binary be a proxy's decoding process, as the
// manifester binary is: a proxy run by these tests starts this binary
// again with decoderEnv set, and it then runs the command it is given
// instead of the tests.
func TestMain(m *testing.M) {
	if os.Getenv(decoderEnv) != "" {
		os.Exit(Run(os.Args[1:]))
	}
	decoderTestHook = true
	os.Exit(m.Run())
}
