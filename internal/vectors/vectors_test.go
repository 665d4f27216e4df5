package vectors_test

import (
	"bytes"
	"encoding/hex"
	"strconv"
	"strings"
	"testing"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/testshared"
	"github.com/manifester/manifester/internal/vectors"
)

const (
	everyType = "../../testdata/specs/everytype"
)

func generate(t *testing.T, dir string) (*codec.Codec, []vectors.Vector) {
	t.Helper()
	reg, err := schema.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	c := codec.New(reg)
	vs, err := vectors.Generate(c)
	if err != nil {
		t.Fatal(err)
	}
	return c, vs
}

// handWritten are frames derived by hand from the seed pages' object
// trees (../shared/seeds), byte by byte, not from our encoder.
var handWritten = map[string]string{
	// size 21 | key 33 | v2 | corr 0 | client_id "" (int16 0) | 0 header tags |
	// Resources: compact count 1+1 | ResourceType 0 | ResourceName "" |
	// Configs: 1+1 | Name "" | Value "" | 0 tags | 0 tags | ValidateOnly false | 0 tags
	"33 2 request": "00000015 0021 0002 00000000 0000 00 | 02 00 01 02 01 01 00 00 00 00",
	// size 17 | corr 0 | 0 header tags | ThrottleTimeMs 0 | Responses 1+1 |
	// ErrorCode 0 | ErrorMessage "" | ResourceType 0 | ResourceName "" | 0 tags | 0 tags
	"33 2 response": "00000011 00000000 00 | 00000000 02 0000 01 00 01 00 00",
	// size 19 | key 29 | v3 | corr 0 | client_id "" | 0 tags | ResourceTypeFilter 0 |
	// ResourceNameFilter "" | PatternTypeFilter 0 | PrincipalFilter "" |
	// HostFilter "" | Operation 0 | PermissionType 0 | 0 tags
	"29 3 request": "00000013 001d 0003 00000000 0000 00 | 00 01 00 01 01 00 00 00",
	// size 24 | corr 0 | 0 tags | ThrottleTimeMs 0 | ErrorCode 0 | ErrorMessage "" |
	// Resources 1+1 | ResourceType 0 | ResourceName "" | PatternType 0 |
	// Acls 1+1 | Principal "" | Host "" | Operation 0 | PermissionType 0 | 0 tags | 0 tags | 0 tags
	"29 3 response": "00000018 00000000 00 | 00000000 0000 01 02 00 01 00 02 01 01 00 00 00 00 00",
}

func TestGenerate43(t *testing.T) {
	c, vs := generate(t, testshared.Spec(t, "4.3"))
	if len(vs) != 604 {
		t.Errorf("%d vectors, want 604 (302 versions of the 89 usable APIs, request and response)", len(vs))
	}
	seen := 0
	for i, v := range vs {
		if i > 0 {
			p := vs[i-1]
			if !(p.APIKey < v.APIKey || p.APIKey == v.APIKey && (p.Version < v.Version || p.Version == v.Version && p.Kind == "request" && v.Kind == "response")) {
				t.Errorf("vector %d (%d v%d %s) out of order after (%d v%d %s)", i, v.APIKey, v.Version, v.Kind, p.APIKey, p.Version, p.Kind)
			}
		}
		b, err := hex.DecodeString(v.Hex)
		if err != nil || len(b) != v.Size {
			t.Errorf("%d v%d %s: hex %d bytes, size %d", v.APIKey, v.Version, v.Kind, len(b), v.Size)
			continue
		}
		key := strings.Join([]string{itoa(v.APIKey), itoa(v.Version), v.Kind}, " ")
		if h, ok := handWritten[key]; ok {
			seen++
			want, _ := hex.DecodeString(strings.NewReplacer(" ", "", "|", "").Replace(h))
			if !bytes.Equal(b, want) {
				t.Errorf("%s:\n got %x\nwant %x", key, b, want)
			}
		}
		// The vector's header version is the one the frame really has.
		api, _ := c.Reg.API(v.APIKey)
		var f *codec.Frame
		if v.Kind == "request" {
			f, err = c.DecodeRequest(b, codec.Options{})
		} else {
			f, err = c.DecodeResponse(b, api, v.Version, codec.Options{})
		}
		if err != nil {
			t.Errorf("%s: %v", key, err)
			continue
		}
		if f.HeaderVersion != v.HeaderVersion || api.Name != v.Name {
			t.Errorf("%s: header v%d name %s, vector says v%d %s", key, f.HeaderVersion, api.Name, v.HeaderVersion, v.Name)
		}
		if v.APIKey == 18 && v.Kind == "response" && v.HeaderVersion != 0 {
			t.Errorf("ApiVersions v%d response header v%d, want v0", v.Version, v.HeaderVersion)
		}
	}
	if seen != len(handWritten) {
		t.Errorf("checked %d hand-written frames, want %d", seen, len(handWritten))
	}
}

func itoa(n int16) string { return strconv.Itoa(int(n)) }

// TestExplicitHeaderVersion: the synthetic spec's headerVersions key shows
// in the vectors.
func TestExplicitHeaderVersion(t *testing.T) {
	_, vs := generate(t, everyType)
	want := map[string]int16{
		"1000 0 request": 2, "1000 1 request": 2, "1000 2 request": 2,
		"1000 0 response": 1, "1000 1 response": 1, "1000 2 response": 1,
		"1001 0 request": 1, "1001 1 request": 2, "1001 0 response": 0, "1001 1 response": 1,
	}
	if len(vs) != len(want) {
		t.Errorf("%d vectors, want %d", len(vs), len(want))
	}
	for _, v := range vs {
		key := itoa(v.APIKey) + " " + itoa(v.Version) + " " + v.Kind
		if hv, ok := want[key]; !ok || hv != v.HeaderVersion {
			t.Errorf("%s: header v%d, want v%d", key, v.HeaderVersion, hv)
		}
	}
}

func TestWrite(t *testing.T) {
	var b bytes.Buffer
	err := vectors.Write(&b, []vectors.Vector{
		{APIKey: 33, Name: "AlterConfigs", Version: 2, Kind: "request", HeaderVersion: 2, Size: 2, Hex: "abcd"},
		{APIKey: 33, Name: "AlterConfigs", Version: 2, Kind: "response", HeaderVersion: 1, Size: 0, Hex: ""},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"api_key":33,"name":"AlterConfigs","version":2,"kind":"request","header_version":2,"size":2,"hex":"abcd"}` + "\n" +
		`{"api_key":33,"name":"AlterConfigs","version":2,"kind":"response","header_version":1,"size":0,"hex":""}` + "\n"
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}
