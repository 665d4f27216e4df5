package site

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// WriteDir writes every file of the site under dir (created if needed).
// Only the uncompressed bodies are written. The directories are made
// first, in path order, each with one mkdir (its parent is made before
// it); then a few workers write the files, each with one open, write and
// close. The first error in path order is returned. Files that exist are
// truncated and rewritten, as os.WriteFile does.
func (s *Site) WriteDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("site: %w", err)
	}
	files := make([]string, len(s.paths))
	made := map[string]bool{filepath.Clean(dir): true}
	for i, p := range s.paths {
		files[i] = filepath.Join(dir, FilePath(p))
		if err := makeDir(made, filepath.Dir(files[i])); err != nil {
			return fmt.Errorf("site: %w", err)
		}
	}
	errs := make([]error, len(files))
	next := make(chan int, writeWorkers)
	var wg sync.WaitGroup
	for range min(writeWorkers, len(files)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				errs[i] = writeFile(files[i], s.assets[s.paths[i]].Body)
			}
		}()
	}
	for i := range files {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return fmt.Errorf("site: %w", err)
		}
	}
	return nil
}

// writeWorkers bounds [Site.WriteDir]'s concurrent file writes: writing
// is mostly the kernel's work, so a few at once. (Making the directories
// from the writers as well, overlapping the two, was slower: mkdirs in
// the same parent directory wait for each other.)
const writeWorkers = 4

// makeDir makes directory d and its parents up to one in made, once each.
// A directory that already exists is fine; anything else at its path is
// an error.
func makeDir(made map[string]bool, d string) error {
	if made[d] {
		return nil
	}
	if parent := filepath.Dir(d); parent != d {
		if err := makeDir(made, parent); err != nil {
			return err
		}
	}
	if err := os.Mkdir(d, 0o755); err != nil {
		if fi, serr := os.Stat(d); !errors.Is(err, fs.ErrExist) || serr != nil || !fi.IsDir() {
			return err
		}
	}
	made[d] = true
	return nil
}
