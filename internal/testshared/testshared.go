// Package testshared finds the shared folder (../shared beside the module
// root) that holds Kafka's specs, record schemas and seed pages for the
// tests. Nothing of Kafka's is copied into this repository, so every test
// that reads Kafka's files gets their location from here.
//
// When the folder is absent the test is skipped with one clear message,
// unless the environment variable CI is "true": then it fails, so that a
// CI run never passes by skipping.
package testshared

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// Name is the shared folder's name, looked for beside the module root.
const Name = "shared"

var find = sync.OnceValues(func() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("testshared: %w", err)
	}
	return locate(wd)
})

// locate walks up from dir to the module root (the directory holding
// go.mod) and returns root/../shared when it is a directory.
func locate(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("testshared: %w", err)
	}
	for d := dir; ; {
		if st, err := os.Stat(filepath.Join(d, "go.mod")); err == nil && !st.IsDir() {
			shared := filepath.Join(filepath.Dir(d), Name)
			if st, err := os.Stat(shared); err == nil && st.IsDir() {
				return shared, nil
			}
			return "", fmt.Errorf("%w: no directory %s beside the module root %s", ErrAbsent, shared, d)
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("%w: no go.mod above %s", ErrAbsent, dir)
		}
		d = parent
	}
}

// ErrAbsent is the cause when the shared folder cannot be found.
var ErrAbsent = errors.New("the shared folder (../shared) is absent")

// Find returns the shared folder's absolute path, or an error wrapping
// [ErrAbsent]. It is for code without a testing.TB (TestMain, package
// variables); tests use [Dir].
func Find() (string, error) { return find() }

// Dir returns the shared folder. When it is absent, t is skipped — or,
// with CI=true, failed — with one message that says what is missing.
func Dir(t testing.TB) string {
	t.Helper()
	d, err := find()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%v (CI=true: tests that read Kafka's files must run)", err)
		}
		t.Skipf("%v: skipping a test that reads Kafka's files (CI=true makes this a failure)", err)
	}
	return d
}

// Path returns elem joined under the shared folder (see [Dir]).
func Path(t testing.TB, elem ...string) string {
	t.Helper()
	return filepath.Join(append([]string{Dir(t)}, elem...)...)
}

// Spec returns the directory of Kafka's message specs of one release
// ("4.3", "trunk"): ../shared/kafka-spec/<release>.
func Spec(t testing.TB, release string) string {
	t.Helper()
	return Path(t, "kafka-spec", release)
}

// SpecRoot returns ../shared/kafka-spec, the directory of every release.
func SpecRoot(t testing.TB) string {
	t.Helper()
	return Path(t, "kafka-spec")
}

// SpecPath returns ../shared/kafka-spec/<release> without a testing.TB,
// for package-level variables that command-line tests pass as flags. When
// the shared folder is absent it returns a path that does not exist; the
// tests using it call [Dir] first (through their run helpers), which skips
// them with the one message.
func SpecPath(release string) string {
	d, err := find()
	if err != nil {
		return filepath.Join("..", Name, "kafka-spec", release)
	}
	return filepath.Join(d, "kafka-spec", release)
}

// Join returns elem joined under the shared folder without a testing.TB,
// for package-level variables (see [SpecPath]); tests using it call [Dir]
// first so that they skip with the one message when the folder is absent.
func Join(elem ...string) string {
	d, err := find()
	if err != nil {
		d = filepath.Join("..", Name)
	}
	return filepath.Join(append([]string{d}, elem...)...)
}
