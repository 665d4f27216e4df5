package spec

import (
	"archive/zip"
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
)

// checkoutDir is where a Kafka source checkout keeps the message specs.
const checkoutDir = "clients/src/main/resources/common/message"

// jarDir is where kafka-clients jars keep them.
const jarDir = "common/message"

// maxSpecFile bounds the size of one spec file; the largest real one is
// about 20 KiB.
const maxSpecFile = 4 << 20

// Source is an opened spec location.
type Source struct {
	FS    fs.FS  // the directory holding the *.json files
	Path  string // what the user gave
	Label string // a short name: the Kafka release from PROVENANCE, or "spec"
	close func() error
}

// Close releases the jar file, if any.
func (s *Source) Close() error {
	if s.close != nil {
		return s.close()
	}
	return nil
}

// Open opens a spec directory, a Kafka source checkout or a jar/zip.
func Open(p string) (*Source, error) {
	st, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("spec: %w", err)
	}
	src := &Source{Path: p, Label: "spec"}
	if st.IsDir() {
		dir := os.DirFS(p)
		if sub, err := fs.Stat(dir, checkoutDir); err == nil && sub.IsDir() {
			src.FS, _ = fs.Sub(dir, checkoutDir)
		} else {
			src.FS = dir
		}
	} else {
		zr, err := zip.OpenReader(p)
		if err != nil {
			return nil, fmt.Errorf("spec: %s is neither a directory nor a jar/zip: %w", p, err)
		}
		src.close = zr.Close
		src.FS = &zr.Reader
		if sub, err := fs.Stat(src.FS, jarDir); err == nil && sub.IsDir() {
			src.FS, _ = fs.Sub(src.FS, jarDir)
		}
	}
	src.Label = readLabel(src.FS, p)
	return src, nil
}

// readLabel takes the release from a PROVENANCE file ("kafka 4.3 from ...")
// when there is one, else falls back to "spec".
func readLabel(fsys fs.FS, p string) string {
	f, err := fsys.Open("PROVENANCE")
	if err != nil {
		return "spec"
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, 4096))
	if sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && strings.EqualFold(fields[0], "kafka") {
			return fields[1]
		}
	}
	return "spec"
}

// ErrNoSpecs means the location holds no *.json files.
var ErrNoSpecs = errors.New("no *.json spec files found")

// ReadAll parses every *.json file of the source, in name order. Parse
// errors of all files are collected into one [ErrorList].
func (s *Source) ReadAll() ([]*File, error) {
	names, err := fs.Glob(s.FS, "*.json")
	if err != nil {
		return nil, fmt.Errorf("spec: %w", err)
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("spec: %s: %w", s.Path, ErrNoSpecs)
	}
	sort.Strings(names)
	var files []*File
	var errs ErrorList
	for _, name := range names {
		b, err := readLimited(s.FS, name)
		if err != nil {
			errs = append(errs, &Error{Pos: Pos{File: path.Base(name)}, Err: err})
			continue
		}
		f, err := Parse(path.Base(name), b)
		if err != nil {
			var l ErrorList
			if errors.As(err, &l) {
				errs = append(errs, l...)
			} else {
				errs = append(errs, &Error{Pos: Pos{File: name}, Err: err})
			}
			continue
		}
		files = append(files, f)
	}
	return files, errs.Err()
}

func readLimited(fsys fs.FS, name string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxSpecFile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxSpecFile {
		return nil, fmt.Errorf("file larger than %d bytes", maxSpecFile)
	}
	return b, nil
}
