package tlstest

import (
	"bytes"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/manifester/manifester/internal/capture"
)

// Message is one Kafka message tshark found in a decrypted capture.
type Message struct {
	// Frame is tshark's number of the packet that completed the message;
	// Stream is its TCP stream index (connections numbered from 0 in the
	// order tshark saw them).
	Frame, Stream int
	// Response is set for a message the server sent.
	Response bool
	// APIKey and Version are the request's; for a response, those of the
	// request tshark paired it with, or -1 when tshark paired none (its
	// Kafka dissector does not register requests of versions it does not
	// know, Produce v9 and later for one).
	APIKey, Version int16
	CorrelationID   int32
}

// TsharkArgs are the arguments that make tshark decrypt TLS on port with
// the key log keylogPath and read the plaintext as Kafka (tshark 4.0).
func TsharkArgs(keylogPath string, port int) []string { return tsharkArgs(keylogPath, port, "kafka") }

// tsharkArgs decrypts TLS on port and gives the plaintext to the
// dissector next.
func tsharkArgs(keylogPath string, port int, next string) []string {
	return []string{
		"-o", "tls.keylog_file:" + keylogPath,
		"-d", fmt.Sprintf("tcp.port==%d,tls", port),
		"-d", fmt.Sprintf("tls.port==%d,%s", port, next),
	}
}

// TsharkFields runs tshark on the capture pcapPath, TLS on port
// decrypted with the key log keylogPath, and returns for each packet
// that passes the display filter (all when empty) the values of fields,
// one string each, several occurrences in a packet joined by commas. The
// decrypted application data is given to the Kafka dissector, or to
// tshark's "data" dissector (field data.data) when a field named
// data.data is asked for. It skips the test when tshark is not installed
// (fails under CI=true).
func TsharkFields(t testing.TB, pcapPath, keylogPath string, port int, filter string, fields ...string) [][]string {
	t.Helper()
	bin := Tool(t, "tshark")
	next := "kafka"
	if slices.Contains(fields, "data.data") {
		next = "data"
	}
	args := append([]string{"-n", "-r", pcapPath}, tsharkArgs(keylogPath, port, next)...)
	if filter != "" {
		args = append(args, "-Y", filter)
	}
	args = append(args, "-T", "fields", "-E", "separator=/t", "-E", "occurrence=a", "-E", "aggregator=,")
	for _, f := range fields {
		args = append(args, "-e", f)
	}
	out := tshark(t, bin, args)
	var rows [][]string
	for l := range strings.Lines(string(out)) {
		rows = append(rows, strings.Split(strings.TrimSuffix(l, "\n"), "\t"))
	}
	return rows
}

// TsharkData returns the application data tshark decrypts from the
// capture pcapPath (TLS on port, key log keylogPath), per connection
// (tshark's TCP stream index: connections in the order their first
// packets come) and per direction (indexed by capture.Dir: the server
// sends from port), concatenated. A connection tshark decrypts nothing
// of is absent (nil).
func TsharkData(t testing.TB, pcapPath, keylogPath string, port int) [][2][]byte {
	t.Helper()
	var data [][2][]byte
	for _, row := range TsharkFields(t, pcapPath, keylogPath, port, "data", "tcp.stream", "tcp.srcport", "data.data") {
		stream, err := strconv.Atoi(row[0])
		if err != nil || stream < 0 {
			t.Fatalf("tshark's tcp.stream %q", row[0])
		}
		for len(data) <= stream {
			data = append(data, [2][]byte{})
		}
		d := capture.ClientToServer
		if row[1] == strconv.Itoa(port) {
			d = capture.ServerToClient
		}
		for h := range strings.SplitSeq(row[2], ",") {
			b, err := hex.DecodeString(h)
			if err != nil {
				t.Fatalf("tshark's data.data %q: %v", h, err)
			}
			data[stream][d] = append(data[stream][d], b...)
		}
	}
	return data
}

func tshark(t testing.TB, bin string, args []string) []byte {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("tshark %q: %v\n%s", args, err, stderr.Bytes())
	}
	return out.Bytes()
}

// TsharkKafka returns the Kafka messages tshark finds in the capture
// pcapPath, TLS on the server port port decrypted with the key log
// keylogPath, in capture order (messages of one packet in their order
// in it). It skips the test when tshark is not installed (fails under
// CI=true).
func TsharkKafka(t testing.TB, pcapPath, keylogPath string, port int) []Message {
	t.Helper()
	bin := Tool(t, "tshark")
	args := append([]string{"-n", "-r", pcapPath}, TsharkArgs(keylogPath, port)...)
	args = append(args, "-Y", "kafka", "-T", "pdml")
	msgs, err := parsePDML(bytes.NewReader(tshark(t, bin, args)), port)
	if err != nil {
		t.Fatalf("reading tshark's PDML: %v", err)
	}
	return msgs
}

type pdmlField struct {
	Name string `xml:"name,attr"`
	Show string `xml:"show,attr"`
}

type pdmlProto struct {
	Name   string      `xml:"name,attr"`
	Fields []pdmlField `xml:"field"`
}

type pdmlPacket struct {
	Protos []pdmlProto `xml:"proto"`
}

// field returns the show value of the first field named name among fs
// (not their children: a protocol's header fields are its own).
func field(fs []pdmlField, name string) (string, bool) {
	for _, f := range fs {
		if f.Name == name {
			return f.Show, true
		}
	}
	return "", false
}

// parsePDML reads tshark's PDML, one Message per kafka protocol layer.
func parsePDML(r io.Reader, port int) ([]Message, error) {
	dec := xml.NewDecoder(r)
	var msgs []Message
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return msgs, nil
		}
		if err != nil {
			return nil, err
		}
		se, ok := tok.(xml.StartElement)
		if !ok || se.Name.Local != "packet" {
			continue
		}
		var p pdmlPacket
		if err := dec.DecodeElement(&p, &se); err != nil {
			return nil, err
		}
		var frame, stream, src int
		for _, pr := range p.Protos {
			var err error
			switch pr.Name {
			case "frame":
				frame, err = intField(pr.Fields, "frame.number")
			case "tcp":
				if stream, err = intField(pr.Fields, "tcp.stream"); err == nil {
					src, err = intField(pr.Fields, "tcp.srcport")
				}
			case "kafka":
				m := Message{Frame: frame, Stream: stream, Response: src == port, APIKey: -1, Version: -1}
				keyField, verField := "kafka.request_key", "kafka.api_version"
				if m.Response {
					keyField, verField = "kafka.response_key", "kafka.response.version"
				}
				var corr int
				if corr, err = intField(pr.Fields, "kafka.correlation_id"); err != nil {
					break
				}
				m.CorrelationID = int32(corr)
				if _, ok := field(pr.Fields, keyField); ok {
					var k, v int
					if k, err = intField(pr.Fields, keyField); err == nil {
						v, err = intField(pr.Fields, verField)
					}
					m.APIKey, m.Version = int16(k), int16(v)
				}
				msgs = append(msgs, m)
			}
			if err != nil {
				return nil, fmt.Errorf("frame %d: %w", frame, err)
			}
		}
	}
}

func intField(fs []pdmlField, name string) (int, error) {
	s, ok := field(fs, name)
	if !ok {
		return 0, fmt.Errorf("no %s", name)
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	return n, nil
}

// TsharkVersions returns request versions tshark 4.0's Kafka dissector
// reads, those of Kafka 2.4: with them, tshark pairs every response with
// its request.
func TsharkVersions() *kversion.Versions { return kversion.V2_4_0() }
