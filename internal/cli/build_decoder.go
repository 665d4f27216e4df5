package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/manifester/manifester/internal/site"
)

// wasmPackage is the decoder of the static site.
const wasmPackage = "github.com/manifester/manifester/cmd/manifester-wasm"

// compileWasm builds the static decoder for `build --wasm`: it compiles
// cmd/manifester-wasm with GOOS=js GOARCH=wasm (reproducibly: -trimpath,
// no build id) and copies wasm_exec.js from the toolchain's GOROOT, so the
// glue always matches the compiler. Both need the Go toolchain and a
// manifester checkout (the current directory inside the module).
func compileWasm(env *Env) (*site.StaticDecoder, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return nil, failure{fmt.Errorf("--wasm needs the Go toolchain (go is not on PATH); build without --wasm for a site whose /decode/ needs `manifester serve`")}
	}
	dir, err := os.MkdirTemp("", "manifester-wasm-")
	if err != nil {
		return nil, failure{err}
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "manifester.wasm")
	cmd := exec.Command(goBin, "build", "-trimpath", "-ldflags=-s -w -buildid=", "-o", out, wasmPackage)
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm", "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	fmt.Fprintln(env.Stderr, "compiling the WebAssembly decoder (GOOS=js GOARCH=wasm go build "+wasmPackage+")")
	if err := cmd.Run(); err != nil {
		return nil, failure{fmt.Errorf("--wasm: compiling %s (run build inside a manifester checkout): %v: %s", wasmPackage, err, strings.TrimSpace(stderr.String()))}
	}
	wasm, err := os.ReadFile(out)
	if err != nil {
		return nil, failure{err}
	}
	root, err := exec.Command(goBin, "env", "GOROOT").Output()
	if err != nil {
		return nil, failure{fmt.Errorf("--wasm: go env GOROOT: %w", err)}
	}
	var glue []byte
	for _, p := range []string{"lib/wasm/wasm_exec.js", "misc/wasm/wasm_exec.js"} { // Go 1.24 moved it to lib
		if glue, err = os.ReadFile(filepath.Join(strings.TrimSpace(string(root)), p)); err == nil {
			break
		}
	}
	if err != nil {
		return nil, failure{fmt.Errorf("--wasm: wasm_exec.js not found in GOROOT: %w", err)}
	}
	return &site.StaticDecoder{Wasm: wasm, WasmExec: glue}, nil
}
