package server

import (
	"encoding/hex"
	"strings"
	"testing"
)

// TestDecodeSplitsAsTheCLI: a frame followed by a byte that is no frame
// (its size prefix one short) is one frame with a decode error, as
// `manifester decode` reads it (package frameflow), not a clean frame and
// a cut one.
func TestDecodeSplitsAsTheCLI(t *testing.T) {
	srv := decodeServer(t)
	frame := kmsgAlterConfigs(false)
	long := append(append([]byte(nil), frame...), 0x00)
	_, a := postJSON(t, srv, "/api/decode", DecodeRequest{Hex: hex.EncodeToString(long)})
	if len(a.Frames) != 1 {
		t.Fatalf("%d frames, want 1: %+v", len(a.Frames), a)
	}
	if f := a.Frames[0]; f.Error == "" || f.Size != len(long) {
		t.Errorf("frame size %d error %q, want all %d bytes and an error", f.Size, f.Error, len(long))
	}
	// Two whole frames stay two.
	two := append(append([]byte(nil), frame...), frame...)
	_, a = postJSON(t, srv, "/api/decode", DecodeRequest{Hex: hex.EncodeToString(two)})
	if len(a.Frames) != 2 || a.Frames[1].Offset != int64(len(frame)) || a.Frames[1].Error != "" {
		t.Fatalf("two frames: %+v", a)
	}
	if !strings.Contains(a.Frames[1].Summary(), "AlterConfigs") {
		t.Errorf("second frame %q", a.Frames[1].Summary())
	}
}
