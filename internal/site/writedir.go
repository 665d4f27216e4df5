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
// Only the uncompressed bodies are written. A few workers write the files
// in path order, each making the directories its file needs first (every
// directory once, with one mkdir: its parent is made before it); the
// first error in path order is returned. Files that exist are truncated
// and rewritten, as os.WriteFile does.
func (s *Site) WriteDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("site: %w", err)
	}
	files := make([]string, len(s.paths))
	for i, p := range s.paths {
		files[i] = filepath.Join(dir, FilePath(p))
	}
	dirs := &dirMaker{made: map[string]*dirState{filepath.Clean(dir): doneDir}}
	errs := make([]error, len(files))
	next := make(chan int, writeWorkers)
	var wg sync.WaitGroup
	for range min(writeWorkers, len(files)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := dirs.make(filepath.Dir(files[i])); err != nil {
					errs[i] = err
					continue
				}
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
// is mostly the kernel's work (creating the directory entries and
// inodes), which runs on every core at once.
const writeWorkers = 4

// dirMaker makes each directory under a root once, from several
// goroutines.
type dirMaker struct {
	mu   sync.Mutex
	made map[string]*dirState
}

// dirState is one directory being made: done is closed when err is set.
type dirState struct {
	done chan struct{}
	err  error
}

var doneDir = func() *dirState {
	d := &dirState{done: make(chan struct{})}
	close(d.done)
	return d
}()

// make makes directory d and its missing parents up to the root. A
// directory that already exists is fine; anything else at its path is an
// error.
func (m *dirMaker) make(d string) error {
	m.mu.Lock()
	st, ok := m.made[d]
	if !ok {
		st = &dirState{done: make(chan struct{})}
		m.made[d] = st
	}
	m.mu.Unlock()
	if ok {
		<-st.done
		return st.err
	}
	defer close(st.done)
	if parent := filepath.Dir(d); parent != d {
		if st.err = m.make(parent); st.err != nil {
			return st.err
		}
	}
	if err := os.Mkdir(d, 0o755); err != nil {
		if fi, serr := os.Stat(d); !errors.Is(err, fs.ErrExist) || serr != nil || !fi.IsDir() {
			st.err = err
		}
	}
	return st.err
}
