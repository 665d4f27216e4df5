package codec_test

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/jsonvalue"
	"github.com/manifester/manifester/internal/span"
)

// kmsgRecordAliases maps kmsg's field names to the record schemas' where
// they are not the same word (compared without case).
var kmsgRecordAliases = map[string]string{
	"instanceid":             "groupinstanceid",
	"rebalancetimeoutmillis": "rebalancetimeout",
	"sessiontimeoutmillis":   "sessiontimeout",
	"timeoutmillis":          "transactiontimeoutms",
	"state":                  "transactionstatus",
	"topics":                 "transactionpartitions",
	"partitions":             "partitionids",
	"lastupdatetimestamp":    "transactionlastupdatetimestampms",
	"starttimestamp":         "transactionstarttimestampms",
}

// kmsgFields flattens a kmsg record struct into "path=value" pairs, its
// names lower-cased and aliased, bytes in hex and uuids formatted, for
// comparison with our decoding's JSON (flattened by jsonFields).
func kmsgFields(v reflect.Value, path string, out map[string]string) {
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if f.Name == "Version" || f.Name == "UnknownTags" {
				continue
			}
			name := strings.ToLower(f.Name)
			if a, ok := kmsgRecordAliases[name]; ok {
				name = a
			}
			kmsgFields(v.Field(i), path+"."+name, out)
		}
	case reflect.Pointer:
		if v.IsNil() {
			out[path] = "null"
		} else {
			kmsgFields(v.Elem(), path, out)
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			out[path] = hex.EncodeToString(v.Bytes())
			return
		}
		out[path+".len"] = fmt.Sprint(v.Len())
		for i := range v.Len() {
			kmsgFields(v.Index(i), fmt.Sprintf("%s[%d]", path, i), out)
		}
	case reflect.Array:
		b := make([]byte, v.Len())
		reflect.Copy(reflect.ValueOf(b), v)
		out[path] = span.FormatUUID(b)
	case reflect.String:
		out[path] = v.String()
	case reflect.Bool:
		out[path] = fmt.Sprint(v.Bool())
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		out[path] = fmt.Sprint(v.Int()) // not a named type's String (TransactionState)
	default:
		out[path] = fmt.Sprint(v.Interface())
	}
}

// jsonFields flattens our decoding's JSON as kmsgFields does kmsg's.
func jsonFields(x any, path string, out map[string]string) {
	switch y := x.(type) {
	case map[string]any:
		for k, v := range y {
			jsonFields(v, path+"."+strings.ToLower(k), out)
		}
	case []any:
		out[path+".len"] = fmt.Sprint(len(y))
		for i, v := range y {
			jsonFields(v, fmt.Sprintf("%s[%d]", path, i), out)
		}
	case nil:
		out[path] = "null"
	default:
		out[path] = fmt.Sprint(y)
	}
}

// TestInternalRecordsKmsgVersions writes every version kmsg knows of the
// __consumer_offsets and __transaction_state keys and values, with every
// field set (tagged fields included), and checks that each decodes as
// its schema with nothing flagged and nothing left, that every field holds
// what kmsg wrote, and that our encoder writes kmsg's bytes again.
func TestInternalRecordsKmsgVersions(t *testing.T) {
	c := recordsCodec(t)
	s := func(x string) *string { return &x }
	uuid := [16]byte{0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	type rec interface{ AppendTo([]byte) []byte }
	var cases []struct {
		module string
		key    bool
		typ    int16
		r      rec
	}
	add := func(module string, key bool, typ int16, r rec) {
		cases = append(cases, struct {
			module string
			key    bool
			typ    int16
			r      rec
		}{module, key, typ, r})
	}
	for v := int16(0); v <= 1; v++ {
		add("group-coordinator", true, 0, &kmsg.OffsetCommitKey{Version: v, Group: "billing", Topic: "orders", Partition: 7})
	}
	add("group-coordinator", true, 0, &kmsg.GroupMetadataKey{Version: 2, Group: "billing"})
	for v := int16(0); v <= 4; v++ {
		val := &kmsg.OffsetCommitValue{Version: v, Offset: 1234, Metadata: "meta", CommitTimestamp: 1700000000001}
		if v >= 3 {
			val.LeaderEpoch = 9
		}
		if v == 1 {
			val.ExpireTimestamp = 1700000000002
		}
		if v >= 4 {
			val.TopicID = uuid
		}
		add("group-coordinator", false, 1, val)
	}
	for v := int16(0); v <= 4; v++ {
		m := kmsg.GroupMetadataValueMember{MemberID: "m-1", ClientID: "cl", ClientHost: "/10.0.0.1",
			SessionTimeoutMillis: 45000, Subscription: []byte{0, 1, 2}, Assignment: []byte{3, 4}}
		if v >= 1 {
			m.RebalanceTimeoutMillis = 300000
		}
		if v >= 3 {
			m.InstanceID = s("inst")
		}
		m2 := m
		m2.MemberID, m2.InstanceID, m2.Assignment = "m-2", nil, []byte{}
		val := &kmsg.GroupMetadataValue{Version: v, ProtocolType: "consumer", Generation: 3, Protocol: s("range"), Leader: nil,
			Members: []kmsg.GroupMetadataValueMember{m, m2}}
		if v >= 2 {
			val.CurrentStateTimestamp = 1700000000003
		}
		add("group-coordinator", false, 2, val)
	}
	add("transaction-coordinator", true, 0, &kmsg.TxnMetadataKey{Version: 0, TransactionalID: "tx-1"})
	for v := int16(0); v <= 1; v++ {
		val := &kmsg.TxnMetadataValue{Version: v, ProducerID: 77, ProducerEpoch: 2, TimeoutMillis: 60000, State: 3,
			Topics:              []kmsg.TxnMetadataValueTopic{{Topic: "a", Partitions: []int32{0, 4}}, {Topic: "b", Partitions: []int32{}}},
			LastUpdateTimestamp: 1700000000004, StartTimestamp: 1700000000005}
		if v >= 1 {
			val.PreviousProducerID, val.NextProducerID, val.ClientTransactionVersion, val.NextProducerEpoch = 76, 78, 2, 3
		} else {
			val.PreviousProducerID, val.NextProducerID, val.NextProducerEpoch = -1, -1, -1
		}
		add("transaction-coordinator", false, 0, val)
	}

	for _, tc := range cases {
		data := tc.r.AppendTo(nil)
		ver := int16(data[0])<<8 | int16(data[1])
		name := fmt.Sprintf("%T v%d", tc.r, ver)
		mod, ok := c.RecordSchemas().Module(tc.module)
		if !ok {
			t.Fatalf("no module %s", tc.module)
		}
		// The record as a records field shows it: framing and body, with
		// nothing flagged, the leaves tiling the bytes.
		tree := c.RecordPart(mod, tc.key, tc.typ, data, span.CatRecord, codec.Options{})
		var flags []string
		tree.Walk(tree.Root(), func(id span.ID, _ int) {
			if f := tree.Flag(id); f != "" {
				flags = append(flags, tree.Path(id)+": "+f)
			}
		})
		if len(flags) > 0 {
			t.Errorf("%s: flagged: %s", name, strings.Join(flags, "; "))
			continue
		}
		if probs := checkTree(tree, len(data)); len(probs) > 0 {
			t.Errorf("%s: tree does not tile:\n%s", name, strings.Join(probs, "\n"))
		}
		// Every field holds what kmsg wrote.
		m, ok := mod.Value(tc.typ)
		bodyVer := ver
		if tc.key {
			m, ok = mod.Key(ver)
			bodyVer = 0
		}
		if !ok {
			t.Fatalf("%s: no schema", name)
		}
		val, _, err := c.DecodeBody(m, bodyVer, data[2:], codec.Options{})
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		js, err := jsonvalue.Marshal(m, bodyVer, &val)
		if err != nil {
			t.Fatal(err)
		}
		var doc any
		dec := json.NewDecoder(bytes.NewReader(js))
		dec.UseNumber()
		if err := dec.Decode(&doc); err != nil {
			t.Fatal(err)
		}
		got, want := map[string]string{}, map[string]string{}
		jsonFields(doc, "", got)
		kmsgFields(reflect.ValueOf(tc.r).Elem(), "", want)
		var diffs []string
		for k, w := range want {
			g, ok := got[k]
			switch {
			case ok && g != w:
				diffs = append(diffs, fmt.Sprintf("%s: ours %s, kmsg %s", k, g, w))
			case !ok && w != "0" && w != "-1" && w != "" && w != "null" && w != "00000000-0000-0000-0000-000000000000":
				// Only the fields a version lacks are left unset above.
				diffs = append(diffs, fmt.Sprintf("%s: kmsg wrote %s, we read no such field", k, w))
			}
		}
		// Every field we read must be one kmsg has.
		for k := range got {
			if _, ok := want[k]; !ok {
				diffs = append(diffs, k+": not a kmsg field")
			}
		}
		sort.Strings(diffs)
		if len(diffs) > 0 {
			t.Errorf("%s (%s):\n%s", name, js, strings.Join(diffs, "\n"))
		}
		// Our encoder writes kmsg's bytes.
		out, err := c.EncodeBody(nil, m, bodyVer, &val)
		if err != nil || !bytes.Equal(out, data[2:]) {
			t.Errorf("%s: re-encoded %x, %v; kmsg %x", name, out, err, data[2:])
		}
	}
}

// TestInternalRecordsFutureVersion: a value of a version newer than the
// schema's (kmsg writes it in the newest layout it knows) is flagged
// saying so, its bytes shown raw and tiling, not decoded as another
// version.
func TestInternalRecordsFutureVersion(t *testing.T) {
	c := recordsCodec(t)
	for _, tc := range []struct {
		module string
		typ    int16
		data   []byte
		want   string
	}{
		{"group-coordinator", 1, (&kmsg.OffsetCommitValue{Version: 5, Offset: 1}).AppendTo(nil), "OffsetCommitValue has no version 5 (valid versions 0-4)"},
		{"group-coordinator", 2, (&kmsg.GroupMetadataValue{Version: 5}).AppendTo(nil), "GroupMetadataValue has no version 5 (valid versions 0-4)"},
		{"transaction-coordinator", 0, (&kmsg.TxnMetadataValue{Version: 2}).AppendTo(nil), "TransactionLogValue has no version 2 (valid versions 0-1)"},
		{"group-coordinator", 1, []byte{0xff, 0xff, 1}, "OffsetCommitValue has no version -1 (valid versions 0-4)"},
	} {
		mod, _ := c.RecordSchemas().Module(tc.module)
		tree := c.RecordPart(mod, false, tc.typ, tc.data, span.CatRecord, codec.Options{})
		if f := tree.Flag(tree.Root()); f != tc.want {
			t.Errorf("%x: flag %q, want %q", tc.data, f, tc.want)
		}
		if probs := checkTree(tree, len(tc.data)); len(probs) > 0 {
			t.Errorf("%x: tree does not tile:\n%s", tc.data, strings.Join(probs, "\n"))
		}
	}
}
