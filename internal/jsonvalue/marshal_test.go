package jsonvalue

import (
	"errors"
	"testing"

	"github.com/manifester/manifester/internal/codec"
)

// TestMarshalErrorPath checks that a body that does not fit its schema is
// refused with the path of the offending value, and that AppendMarshal
// leaves dst as it was then and appends Marshal's bytes otherwise.
func TestMarshalErrorPath(t *testing.T) {
	c := load(t, "4.3")
	api, err := c.Reg.Lookup("CreateTopics")
	if err != nil {
		t.Fatal(err)
	}
	m := api.Request
	body := codec.DefaultStruct(m.Body, 0)
	good, err := Marshal(m, 7, &body)
	if err != nil {
		t.Fatal(err)
	}
	got, err := AppendMarshal([]byte("x"), m, 7, &body)
	if err != nil || string(got) != "x"+string(good) {
		t.Fatalf("AppendMarshal %q, %v; want x%s", got, err, good)
	}
	// Topics[0].Configs[0] with a struct value that has no fields.
	topic := m.Body.Fields[0].Type.Elem.Struct
	body.Kids()[0].SetKids([]codec.Value{codec.DefaultStruct(topic, 1)})
	body.Kids()[0].Kids()[0].Kids()[4].SetKids([]codec.Value{{}})
	for _, f := range topic.Fields {
		if f.Name == "Configs" && f.Index != 4 {
			t.Fatalf("Configs is field %d", f.Index)
		}
	}
	_, err = AppendMarshal([]byte("x"), m, 7, &body)
	var e *Error
	if !errors.As(err, &e) || e.Path != "CreateTopicsRequest.Topics[0].Configs[0]" || !errors.Is(err, ErrType) {
		t.Fatalf("error %v, want one at CreateTopicsRequest.Topics[0].Configs[0]", err)
	}
}
