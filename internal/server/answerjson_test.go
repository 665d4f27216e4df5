package server

import (
	"encoding/json"
	"testing"

	"github.com/manifester/manifester/internal/report"
)

// TestAnswerFrameJSON: an answer frame is the report's members and then
// "html", as the embedding wrote them before AnswerFrame had a JSON
// method of its own.
func TestAnswerFrameJSON(t *testing.T) {
	c := testSite(t).Newest().Codec
	f := report.Decode(c, kmsgAlterConfigs(true), report.Options{Roundtrip: true})
	type plain struct {
		*report.Frame
		HTML string `json:"html"`
	}
	for _, a := range []AnswerFrame{{Frame: f, HTML: `<td class="b x">&</td>`}, {Frame: &report.Frame{Kind: "request"}}, {}} {
		got, err := json.Marshal(Answer{Frames: []AnswerFrame{a}})
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(struct {
			Frames []plain `json:"frames"`
		}{[]plain{{a.Frame, a.HTML}}})
		if err != nil || string(got) != string(want) {
			t.Errorf("answer JSON\n%s\nwant\n%s (%v)", got, want, err)
		}
	}
}
