// Package topicnames remembers the names of topic ids. Fetch v13+ and
// other APIs carry topic ids only; a Metadata, DescribeTopicPartitions or
// CreateTopics response (any response struct that holds both a TopicId
// and a topic name) tells which name an id stands for. A [Map] learns
// these pairs from the responses of one capture or proxy session, in
// order ([Map.LearnTree] from a response's span tree, [Map.Learn] from
// its values), and notes the name on later frames' topic-id rows
// ([Map.Annotate]).
//
// Each pair is learnt at a position (the frame's index in the session),
// and is used only for frames after that position, so frames decoded out
// of order (on several workers) are annotated as if decoded in order.
package topicnames

import (
	"strconv"
	"sync"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/framefacts"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/span"
)

// MaxIDs bounds the (id, name) entries a Map holds; pairs beyond it are
// counted in [Map.Dropped] and not learnt. An id holds one entry per
// position that named it (the last name a position gave it).
const MaxIDs = 1 << 20

// MaxNameBytes bounds the bytes of the names a Map holds, all entries
// together: names may be 32 KiB each on the wire, so MaxIDs of them
// would be 32 GiB in a long proxy session. Pairs beyond it are counted
// in [Map.Dropped] and not learnt.
const MaxNameBytes = 64 << 20

// Map is a session's topic id -> name map. It is safe for concurrent
// use: one goroutine learns (in session order) while others look up.
type Map struct {
	mu      sync.RWMutex
	ids     map[[16]byte][]entry
	n       int
	bytes   int // of the names held
	dropped int64
	teaches map[teachKey]bool
}

type teachKey struct {
	m *schema.Message
	v int16
}

type entry struct {
	at   int64
	name string
}

// New returns an empty map.
func New() *Map {
	return &Map{ids: map[[16]byte][]entry{}, teaches: map[teachKey]bool{}}
}

// Teaches reports whether frames of response message msg at version v
// can name topic ids: a struct of it has both a TopicId and a topic-name
// field at v. Callers use it to decode only the frames that [Map.Learn]
// can learn from (Fetch responses, which carry names up to v12 and ids
// from v13, never both, are not among them).
func (m *Map) Teaches(msg *schema.Message, v int16) bool {
	if msg == nil || msg.Type != schema.TypeResponse {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	k := teachKey{msg, v}
	t, ok := m.teaches[k]
	if !ok {
		t = teaches(msg.Body, v, 0)
		m.teaches[k] = t
	}
	return t
}

func teaches(s *schema.Struct, v int16, depth int) bool {
	if s == nil || depth > 64 {
		return false
	}
	var id, name bool
	for _, f := range s.Fields {
		if !f.Versions.Contains(v) {
			continue
		}
		id = id || framefacts.IsTopicID(f)
		name = name || isTopicName(f)
		if st := f.Type.ElemStruct(); st != nil && teaches(st, v, depth+1) {
			return true
		}
	}
	return id && name
}

func isTopicName(f *schema.Field) bool {
	return f.Type.Kind == schema.KindString && f.EntityType == "topicName"
}

// Learn records the (id, name) pairs of a cleanly decoded response at
// position at. It returns the number of pairs that were new.
func (m *Map) Learn(f *codec.Frame, at int64) int {
	if f == nil || f.API == nil || f.Kind != schema.TypeResponse || !m.Teaches(f.API.Response, f.Version) {
		return 0
	}
	l := learner{m: m, v: f.Version, at: at}
	l.structValue(f.API.Response.Body, &f.Body, 0)
	return l.added
}

type learner struct {
	m     *Map
	v     int16
	at    int64
	added int
}

func (l *learner) structValue(s *schema.Struct, val *codec.Value, depth int) {
	if s == nil || depth > 64 || val.IsNull() || len(val.Kids()) != len(s.Fields) {
		return
	}
	var id []byte
	var name []byte
	for _, f := range s.Fields {
		if !f.Versions.Contains(l.v) {
			continue
		}
		kid := &val.Kids()[f.Index]
		switch {
		case framefacts.IsTopicID(f):
			id = kid.Bytes()
		case isTopicName(f) && !kid.IsNull():
			name = kid.Bytes()
		case f.Type.Kind == schema.KindStruct && f.Type.Struct != nil:
			l.structValue(f.Type.Struct, kid, depth+1)
		case f.Type.Kind == schema.KindArray && f.Type.Elem != nil && f.Type.Elem.Kind == schema.KindStruct && !kid.IsNull():
			for i := range kid.Kids() {
				l.structValue(f.Type.Elem.Struct, &kid.Kids()[i], depth+1)
			}
		}
	}
	if len(id) == 16 && len(name) > 0 && [16]byte(id) != [16]byte{} {
		if l.m.add([16]byte(id), string(name), l.at) {
			l.added++
		}
	}
}

func (m *Map) add(id [16]byte, name string, at int64) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	es := m.ids[id]
	if len(es) > 0 && es[len(es)-1].name == name {
		return false
	}
	replace := len(es) > 0 && es[len(es)-1].at == at
	grow := len(name)
	if replace {
		grow -= len(es[len(es)-1].name)
	}
	if !replace && m.n >= MaxIDs || m.bytes+grow > MaxNameBytes {
		m.dropped++
		return false
	}
	m.bytes += grow
	if replace {
		// The same position named the id before: only the last name of
		// a position is ever looked up, so it replaces the earlier one
		// (a response naming one id a million times holds one entry).
		es[len(es)-1].name = name
		return true
	}
	m.ids[id] = append(es, entry{at: at, name: name})
	m.n++
	return true
}

// Lookup returns the name id had as last learnt before position before.
func (m *Map) Lookup(id [16]byte, before int64) (string, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	es := m.ids[id]
	for i := len(es) - 1; i >= 0; i-- {
		if es[i].at < before {
			return es[i].name, true
		}
	}
	return "", false
}

// Resolver returns a lookup of names learnt before position before.
func (m *Map) Resolver(before int64) framefacts.TopicName {
	return func(id [16]byte) (string, bool) { return m.Lookup(id, before) }
}

func (m *Map) empty() bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.n == 0
}

// Dropped returns the number of pairs not learnt because the map was full.
func (m *Map) Dropped() int64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.dropped
}

// LearnTree records the (id, name) pairs of a cleanly decoded response,
// read from its tree t (frame, message and version as [Map.Learn] takes
// them from a codec.Frame), at position at: every struct row that holds
// both a TopicId row and a topic-name row, found by their fields'
// descriptors. It returns the number of pairs that were new. It reads
// the tree of the one decode a front end makes, so no frame is decoded a
// second time for its names.
func (m *Map) LearnTree(t *span.Tree, msg *schema.Message, v int16, at int64) int {
	if t == nil || !m.Teaches(msg, v) {
		return 0
	}
	body := t.Body()
	if body == span.None {
		return 0
	}
	added := 0
	t.Walk(body, func(id span.ID, _ int) {
		var uuid, name []byte
		for k := t.N(id).First; k != span.None; k = t.N(k).Next {
			f := t.Desc(k).Field
			if f == nil || t.N(k).Index >= 0 {
				continue // not a field row, or an element of an array field
			}
			switch n := t.N(k); {
			case n.Val == span.ValUUID && framefacts.IsTopicID(f):
				uuid = t.ValueBytes(k)
			case n.Val == span.ValString && isTopicName(f) && !n.Null:
				name = t.ValueBytes(k)
			}
		}
		if len(uuid) == 16 && len(name) > 0 && [16]byte(uuid) != [16]byte{} && m.add([16]byte(uuid), string(name), at) {
			added++
		}
	})
	return added
}

// Annotate notes the topic name beside every topic-id row of the tree
// (a uuid row of a TopicId field) whose id was named before position
// before: `= <uuid> (topic "orders")`. It returns the number of rows
// annotated.
func (m *Map) Annotate(t *span.Tree, before int64) int {
	if m.empty() {
		return 0
	}
	n, _ := m.AnnotateRows(t, before)
	return n
}

// AnnotateRows is [Map.Annotate] that also counts the tree's topic-id
// rows, annotated or not (even when the map is empty; rows unlinked by
// span.Tree.CutKids count too, and get the note unseen): a caller that
// annotated a tree before every name of the positions before it was
// learnt (decode --pcap's workers) knows whether annotating it again
// could change it.
func (m *Map) AnnotateRows(t *span.Tree, before int64) (annotated, rows int) {
	if t == nil || t.Root() == span.None {
		return 0, 0
	}
	// The rows in table order rather than a walk: a row no longer in the
	// tree (unlinked by CutKids) is annotated unseen, and counted.
	for id := span.ID(0); int(id) < t.Len(); id++ {
		r := t.N(id)
		if r.Val != span.ValUUID || r.Null {
			continue
		}
		if f := t.Desc(id).Field; f == nil || !framefacts.IsTopicID(f) {
			continue
		}
		b := t.ValueBytes(id)
		if len(b) != 16 {
			continue
		}
		rows++
		if a := t.Extra(id, false); a != nil && a.Note != "" {
			continue
		}
		if name, ok := m.Lookup([16]byte(b), before); ok {
			t.Extra(id, true).Note = "topic " + strconv.Quote(name)
			annotated++
		}
	}
	return annotated, rows
}
