package codec

import (
	"bytes"
	"fmt"
	"math/rand"
	"testing"

	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/testshared"
)

// TestOwnHeaderMatchesPlan holds the headers written without their plan
// (framePlan.hdrOwn) to what appendSpecHeader writes from the plan: every
// message and version of the 4.3 spec, requests and responses, with
// correlation ids, client ids (empty, short, null, too long), header
// values (none, the defaults, the wrong field count) and header tags
// (none, one), encoded once with the frame plan's hdrOwn as built and once
// with it cleared: the same bytes and the same error.
func TestOwnHeaderMatchesPlan(t *testing.T) {
	testshared.Dir(t)
	reg, err := schema.Load(testshared.SpecPath("4.3"))
	if err != nil {
		t.Fatal(err)
	}
	c := New(reg)
	rng := rand.New(rand.NewSource(4))
	clientIDs := []struct {
		id   []byte
		null bool
	}{{nil, false}, {[]byte("client-1"), false}, {nil, true}, {bytes.Repeat([]byte("c"), maxStringLen+1), false}}
	own := map[schema.MessageType]int{}
	var compared, failed int
	for _, m := range reg.Messages {
		t0 := frameTable(m.Type)
		if t0 < 0 || m.APIKey < 0 || int(m.APIKey) >= len(c.frames[t0]) {
			continue
		}
		api, ok := reg.API(m.APIKey)
		if !ok {
			continue
		}
		for v := m.Valid.Lo; v <= m.Valid.Hi; v++ {
			fp := c.framePlanOf(m, t0, v)
			if fp == nil || !fp.hdrOwn {
				continue
			}
			own[m.Type]++
			body := DefaultStruct(fp.body.s, 0)
			for round := 0; round < 8; round++ {
				cid := clientIDs[round%len(clientIDs)]
				f := &Frame{Kind: m.Type, API: api, Version: v, CorrelationID: rng.Int31(), ClientID: cid.id, ClientIDNull: cid.null, Body: body}
				switch round % 3 {
				case 1:
					f.Header = kidsValue(fp.hdr.enc.defKids)
				case 2:
					if round%2 == 0 {
						f.Header = kidsValue(make([]Value, len(fp.hdr.all)+1))
					}
				}
				if round >= 6 {
					f.HeaderTags = []RawTag{{Tag: 77, Data: []byte{1, 2}}}
				}
				encode := c.EncodeRequest
				if m.Type == schema.TypeResponse {
					encode = c.EncodeResponse
				}
				got, gotErr := encode([]byte{0xAA}, f)
				fp.hdrOwn = false
				want, wantErr := encode([]byte{0xAA}, f)
				fp.hdrOwn = true
				what := fmt.Sprintf("%s v%d round %d", m.Name, v, round)
				if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
					t.Fatalf("%s: error %v, from the plan %v", what, gotErr, wantErr)
				}
				if wantErr != nil {
					failed++
					continue
				}
				compared++
				if !bytes.Equal(got, want) {
					t.Fatalf("%s: bytes differ from the plan's\n got %x\nwant %x", what, got, want)
				}
			}
		}
	}
	t.Logf("own headers: %d request and %d response plans; %d frames alike, %d errors alike", own[schema.TypeRequest], own[schema.TypeResponse], compared, failed)
	if own[schema.TypeRequest] < 100 || own[schema.TypeResponse] < 100 || compared < 1000 || failed < 100 {
		t.Errorf("too few cases")
	}
}

// kidsValue is a struct value of kids, for tests that build values
// whatever Value's layout.
func kidsValue(kids []Value) Value { return KidsValue(kids) }
