package span

import (
	"bytes"
	"math"
	"testing"
)

// TestAppendValueJSONBare: the bare value is AppendValueJSON's for every
// kind of value, null or not, notes or not.
func TestAppendValueJSONBare(t *testing.T) {
	tr := &Tree{Bytes: []byte("0123456789abcdef-text")}
	d := NewDesc("ErrorCode", "int16", "")
	d.Note = NoteErrorCode
	root := tr.Add(None, d, 0, CatNone)
	kinds := []ValueKind{ValNone, ValInt, ValBool, ValFloat, ValString, ValBytes, ValUUID, ValCount, ValArray, ValStruct, ValPresence, ValRecords, ValText}
	for _, k := range kinds {
		for _, null := range []bool{false, true} {
			id := tr.Add(root, d, 0, CatNone)
			n := tr.N(id)
			n.Val, n.Null, n.Int = k, null, 3
			n.VOff, n.VLen = 0, 16
			if k == ValText {
				n.VOff, n.VLen = 17, 4
			}
			if k == ValFloat {
				n.SetFloat(math.Inf(-1))
			}
			want, wok := tr.AppendValueJSON([]byte("x"), id)
			got, gok := tr.AppendValueJSONBare([]byte("x"), id)
			if wok != gok || !bytes.Equal(got, want) {
				t.Errorf("kind %d null %v: %s %v, want %s %v", k, null, got, gok, want, wok)
			}
		}
	}
}
