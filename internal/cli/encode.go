package cli

import (
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/manifester/manifester/internal/budget"
	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/frameflow"
	"github.com/manifester/manifester/internal/report"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/textenc"
)

const encodeUsage = "[--spec P] --api KEY [--version N] [--kind request|response] [--correlation-id N] [--client-id S] [--raw] (FILE.json | -)"

func init() {
	register(&command{
		name:    "encode",
		usage:   encodeUsage,
		summary: "encode a message body given as JSON (or decode --format json lines, one frame each) into a frame (hex, or raw bytes with --raw)",
		run:     runEncode,
	})
}

// maxEncodeInput bounds the JSON encode reads.
const maxEncodeInput = 256 << 20

func runEncode(env *Env, args []string) error {
	fs := newFlags(env, "encode", encodeUsage)
	var specs specFlags
	fs.Var(&specs, "spec", "spec location `[LABEL=]PATH` (default $MANIFESTER_SPEC)")
	apiArg := fs.String("api", "", "API `name or key`")
	version := fs.Int("version", -1, "API version (default: the highest valid version)")
	kind := fs.String("kind", "request", "request or response")
	corr := fs.Int("correlation-id", 0, "correlation id of the header")
	clientID := fs.String("client-id", "manifester", "client id of a request header (\"\" for empty)")
	nullClient := fs.Bool("null-client-id", false, "send a null client id")
	raw := fs.Bool("raw", false, "write the frame as raw bytes instead of hex")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 && stdinIsInput(env) {
		pos = []string{"-"}
	}
	if len(pos) != 1 {
		return usagef("encode takes one FILE.json or - for stdin, got %d arguments", len(pos))
	}
	if *corr < -1<<31 || *corr > 1<<31-1 {
		return usagef("--correlation-id %d is not an int32", *corr)
	}
	var k schema.MessageType
	switch *kind {
	case "request":
		k = schema.TypeRequest
	case "response":
		k = schema.TypeResponse
	default:
		return usagef("unknown --kind %q (want request or response)", *kind)
	}
	rel, all, err := specs.newest(env)
	if err != nil {
		return err
	}
	warnNewestOnly(env, "encode", all)
	data, err := readEncodeInput(env, pos[0])
	if err != nil {
		return err
	}
	docs, err := frameflow.Documents(data)
	if err != nil {
		return failure{err}
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if set["client-id"] && set["null-client-id"] {
		warnf(env, "encode", "--client-id has no effect with --null-client-id")
	}
	flags := encodeFlags{api: *apiArg, version: *version, kind: k, corr: *corr, clientID: *clientID, nullClient: *nullClient, raw: *raw, set: set, warned: new(bool)}
	for i, doc := range docs {
		if err := encodeDocument(env, rel, flags, data, doc); err != nil {
			if len(docs) > 1 {
				return fmt.Errorf("JSON value %d of %d: %w", i+1, len(docs), err)
			}
			return err
		}
	}
	return nil
}

// encodeFlags are encode's settings; a decode report line overrides the
// ones not given on the command line.
type encodeFlags struct {
	api        string
	version    int
	kind       schema.MessageType
	corr       int
	clientID   string
	nullClient bool
	raw        bool
	set        map[string]bool // the flags given
	warned     *bool           // the client id flags were said to have no effect on a response
}

// encodeDocument encodes one JSON value of input and writes the frame.
func encodeDocument(env *Env, rel *Release, fl encodeFlags, input []byte, doc frameflow.Document) error {
	apiArg, version, k, corr, clientID, nullClient, raw, set := &fl.api, &fl.version, fl.kind, &fl.corr, &fl.clientID, &fl.nullClient, &fl.raw, fl.set
	body, fromReport, err := frameflow.Body(doc.Bytes)
	if err != nil {
		return failure{err}
	}
	// Errors in the body give lines and columns in the input.
	bodyOff := doc.Off
	if fromReport != nil {
		bodyOff += fromReport.BodyOff
		if fromReport.BodyOff < 0 {
			input, bodyOff = nil, 0
		}
	}
	// A decode report line names its API, version, kind, correlation id,
	// client id and header tags; flags override the first five.
	if fromReport != nil {
		if !set["api"] {
			*apiArg = fmt.Sprint(fromReport.APIKey)
		}
		if !set["version"] {
			*version = int(fromReport.Version)
		}
		switch fromReport.Kind {
		case "", "request", "response":
		default:
			return failure{fmt.Errorf("decode report line: kind %q is not request or response", fromReport.Kind)}
		}
		if !set["kind"] && fromReport.Kind != "" {
			if fromReport.Kind == "response" {
				k = schema.TypeResponse
			} else {
				k = schema.TypeRequest
			}
		}
		if !set["correlation-id"] {
			*corr = int(fromReport.CorrelationID)
		}
		if !set["client-id"] && !set["null-client-id"] {
			if fromReport.ClientID != nil {
				*clientID = *fromReport.ClientID
			} else if k == schema.TypeRequest && fromReport.HeaderVersion >= 1 {
				*nullClient = true
			}
		}
	}
	if k == schema.TypeResponse && !*fl.warned {
		for _, name := range []string{"client-id", "null-client-id"} {
			if set[name] {
				warnf(env, "encode", "--%s has no effect on a response (its header has no client id)", name)
				*fl.warned = true
			}
		}
	}
	if *apiArg == "" {
		return usagef("--api is required")
	}
	api, v, err := lookupAPI(rel.Reg, *apiArg, *version)
	if err != nil {
		return err
	}
	msg := frameflow.Message{Kind: k, API: api, Version: v, CorrelationID: int32(*corr), Body: body, Input: input, BodyOff: bodyOff}
	if fromReport != nil {
		for _, t := range fromReport.HeaderTags {
			data, err := hex.DecodeString(t.Data)
			if err != nil {
				return failure{fmt.Errorf("header_tags: tag %d: %w", t.Tag, err)}
			}
			msg.HeaderTags = append(msg.HeaderTags, codec.RawTag{Tag: t.Tag, Data: data})
		}
	}
	if !*nullClient {
		msg.ClientID = clientID
	}
	out, err := frameflow.Encode(rel.Codec, msg)
	if err != nil {
		return failure{err}
	}
	// Records given as hex are copied as they are; say so when the frame
	// does not decode (bad batches may be what the user wants to send).
	if why := decodeProblem(rel.Codec, out, &msg); why != "" {
		fmt.Fprintf(env.Stderr, "manifester encode: warning: the frame does not decode cleanly: %s\n", why)
	}
	if *raw {
		_, err = env.Stdout.Write(out)
	} else {
		_, err = fmt.Fprintln(env.Stdout, hex.EncodeToString(out))
	}
	if err != nil {
		return failure{fmt.Errorf("writing: %w", err)}
	}
	return nil
}

// decodeProblem says why frame out of msg does not decode cleanly, ""
// when it does. A decode without a span tree, which costs about what the
// encode did, decides; only a frame that fails is decoded again into its
// report, whose error places the problem (a span tree costs hundreds of
// bytes per byte of frame).
func decodeProblem(c *codec.Codec, out []byte, msg *frameflow.Message) string {
	opts := codec.Options{Budget: budget.Limits{}.For(nil, len(out))}
	var err error
	if msg.Kind == schema.TypeResponse {
		_, err = c.DecodeResponse(out, msg.API, msg.Version, opts)
	} else {
		_, err = c.DecodeRequest(out, opts)
	}
	if err == nil {
		return ""
	}
	if r := report.Decode(c, out, msg.Options(report.Options{NoAlternatives: true})); r.Error != "" {
		return r.Error
	}
	return err.Error()
}

func readEncodeInput(env *Env, name string) ([]byte, error) {
	var r io.Reader = env.Stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, failure{err}
		}
		defer f.Close()
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, maxEncodeInput+1))
	if err != nil {
		return nil, failure{fmt.Errorf("reading %s: %w", name, err)}
	}
	if len(data) > maxEncodeInput {
		return nil, failure{fmt.Errorf("%s: more than %d bytes", name, maxEncodeInput)}
	}
	// JSON saved on Windows may start with a byte order mark, and
	// PowerShell 5's ">" writes UTF-16.
	if data, err = textenc.UTF8(data); err != nil {
		return nil, failure{fmt.Errorf("reading %s: %w", name, err)}
	}
	return data, nil
}
