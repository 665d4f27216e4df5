package stats

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// TestListingTop: a summary of NewListing(2) lists the two connections
// with the most frames (the first seen among equals), in the order they
// appeared, and sums the rest, whether they ended (Close) or not; the text,
// JSON and HTML say so. New lists every connection.
func TestListingTop(t *testing.T) {
	frames := []int{3, 1, 4, 1, 5, 4}
	feed := func(a *Aggregator, closeSome bool) {
		for i, n := range frames {
			conn := strconv.Itoa(i + 1)
			for range n {
				a.Add(&Record{Conn: conn, Client: "10.0.0." + conn + ":5000", Server: "10.0.0.9:9092", APIKey: 18, API: "ApiVersions", Version: 3})
			}
			if i == 5 { // a response without its request, on the last
				a.Add(&Record{Conn: conn, Response: true})
			}
			if closeSome && i%2 == 0 {
				a.Close(conn)
			}
		}
	}
	for _, closeSome := range []bool{false, true} {
		a := NewListing(2)
		feed(a, closeSome)
		s := a.Summary()
		var ids []int
		for _, c := range s.Connections {
			ids = append(ids, c.ID)
		}
		// 5 frames (conn 5), then 5 (conn 6: 4 and an unpaired response)
		// and 4 (conn 3): conn 5 and 6 listed, in order.
		if len(ids) != 2 || ids[0] != 5 || ids[1] != 6 {
			t.Errorf("close %v: listed %v, want [5 6]", closeSome, ids)
		}
		want := Omitted{Connections: 4, Frames: 3 + 1 + 4 + 1}
		if s.Omitted == nil || *s.Omitted != want {
			t.Errorf("close %v: omitted %+v, want %+v", closeSome, s.Omitted, want)
		}
		var text, js, html bytes.Buffer
		if err := s.WriteText(&text); err != nil {
			t.Fatal(err)
		}
		if err := s.WriteJSON(&js); err != nil {
			t.Fatal(err)
		}
		if err := s.WriteHTML(&html); err != nil {
			t.Fatal(err)
		}
		line := "and 4 more connections (9 frames), with no more frames each than those listed"
		if !strings.Contains(text.String(), line+"\n") || !strings.Contains(html.String(), "<p>"+line+"</p>") {
			t.Errorf("close %v: text %q / html without %q", closeSome, text.String(), line)
		}
		var doc struct {
			Omitted *Omitted `json:"connections_omitted"`
		}
		if err := json.Unmarshal(js.Bytes(), &doc); err != nil || doc.Omitted == nil || *doc.Omitted != want {
			t.Errorf("close %v: JSON connections_omitted %+v (%v)", closeSome, doc.Omitted, err)
		}
	}
	all := New()
	feed(all, true)
	if s := all.Summary(); len(s.Connections) != len(frames) || s.Omitted != nil {
		t.Errorf("New: %d listed, omitted %+v", len(s.Connections), s.Omitted)
	}
}

// TestListingBounded: connections that end are kept as a sum once they
// do not make the list, so that a capture of many connections costs the
// list and the connections open at once.
func TestListingBounded(t *testing.T) {
	a := NewListing(10)
	for i := range 5000 {
		conn := strconv.Itoa(i + 1)
		for range 1 + i%7 {
			a.Add(&Record{Conn: conn})
		}
		a.Close(conn)
		if len(a.done) > 10 || len(a.conns) != 0 {
			t.Fatalf("after %d connections: %d ended kept, %d open", i+1, len(a.done), len(a.conns))
		}
	}
	s := a.Summary()
	if len(s.Connections) != 10 || s.Omitted == nil || s.Omitted.Connections != 4990 {
		t.Fatalf("%d listed, omitted %+v", len(s.Connections), s.Omitted)
	}
	for _, c := range s.Connections {
		if c.Frames != 7 {
			t.Errorf("listed connection %d with %d frames; the most is 7", c.ID, c.Frames)
		}
	}
	if s.Connections[0].ID != 7 {
		t.Errorf("first listed %d, want 7 (the first with 7 frames)", s.Connections[0].ID)
	}
}
