package history

import (
	"fmt"
	"testing"

	"github.com/manifester/manifester/internal/release"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/spec"
)

// synthRegistry builds a registry of API key 1000 ("X") at the given
// validVersions.
func synthRegistry(t *testing.T, label, valid string) *schema.Registry {
	t.Helper()
	var files []*spec.File
	for _, kind := range []string{"request", "response"} {
		name := "XRequest"
		if kind == "response" {
			name = "XResponse"
		}
		src := fmt.Sprintf(`{"apiKey": 1000, "type": "%s", "name": "%s", "validVersions": "%s", "flexibleVersions": "none", "fields": []}`, kind, name, valid)
		f, err := spec.Parse(name+".json", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	reg, err := schema.Build(files)
	if err != nil {
		t.Fatal(err)
	}
	reg.Label = label
	return reg
}

// TestTableOnlyDefinedVersions: the table has a row for each version
// some release defines, not for the gap between releases. With X at
// "0-1" in 1.0 and "30000-30001" in 2.0 it had 30002 rows, shown on
// every version page (3 MB each, from two files of 200 bytes).
func TestTableOnlyDefinedVersions(t *testing.T) {
	h, err := New([]*release.Release{{Label: "1.0", Reg: synthRegistry(t, "1.0", "0-1")}, {Label: "2.0", Reg: synthRegistry(t, "2.0", "30000-30001")}})
	if err != nil {
		t.Fatal(err)
	}
	rows := h.Table(1000)
	var got []int16
	for _, r := range rows {
		got = append(got, r.Version)
	}
	if fmt.Sprint(got) != "[0 1 30000 30001]" {
		t.Errorf("%d rows (versions %v ...), want [0 1 30000 30001]", len(got), got[:min(len(got), 4)])
	}
}
