package cli

import (
	"flag"
	"fmt"
	"strings"

	"github.com/manifester/manifester/internal/recpage"
	"github.com/manifester/manifester/internal/recschema"
	"github.com/manifester/manifester/internal/render/jsonr"
	"github.com/manifester/manifester/internal/render/text"
	"github.com/manifester/manifester/internal/spec"
)

// recordFlags collects repeated --records PATH flags: the record schemas
// of Kafka's internal topics (see recschema.Load).
type recordFlags []string

func (r *recordFlags) String() string     { return strings.Join(*r, ",") }
func (r *recordFlags) Set(v string) error { *r = append(*r, v); return nil }

// addRecordsFlag adds --records to a command's flags.
func addRecordsFlag(fs *flag.FlagSet) *recordFlags {
	var r recordFlags
	fs.Var(&r, "records", "record schemas of the internal topics: `DIR` of module folders, one module folder, a module jar, or a Kafka distribution or its libs/ (repeatable; default $MANIFESTER_RECORDS)")
	return &r
}

// attachRecords loads the record schemas (the flags, else
// $MANIFESTER_RECORDS, else none) into the release's codec, and forces the
// records of every records field to be read as topic's when topic is set.
func attachRecords(env *Env, rel *Release, paths recordFlags, topic string) error {
	if len(paths) == 0 {
		if p := env.Getenv("MANIFESTER_RECORDS"); p != "" {
			paths = recordFlags{p}
		}
	}
	if topic != "" {
		if k, _ := recschema.TopicKind(topic); k == recschema.KindNone {
			return usagef("--records-topic %q is not an internal topic with record schemas (want one of %s)", topic, strings.Join(recschema.Topics(), ", "))
		}
	}
	var set *recschema.Set
	var err error
	if len(paths) == 0 {
		// The --spec location may hold record schemas beside the message
		// specs: a source checkout, a distribution, module jars, a folder
		// of module folders given with a comma.
		if set, err = specRecords(rel.Path); err != nil {
			return usageError{err}
		}
		if set == nil {
			if topic != "" {
				return usagef("--records-topic needs the record schemas: give --records DIR (e.g. ../shared/kafka-records/4.3) or set MANIFESTER_RECORDS")
			}
			return nil
		}
	} else {
		expanded := make([]string, len(paths))
		for i, p := range paths {
			expanded[i] = expandHome(env, p)
		}
		if set, err = recschema.Load(expanded...); err != nil {
			return usageError{err}
		}
	}
	if topic != "" {
		if k, _ := set.ForTopic(topic); k == recschema.KindNone {
			_, mod := recschema.TopicKind(topic)
			return usagef("--records-topic %s needs the %s record schemas, which %s does not hold", topic, mod, paths)
		}
	}
	rel.Codec.SetRecordSchemas(set)
	rel.Codec.RecordsTopic = topic
	return nil
}

// showRecord prints the page of a record type when name is one of the
// loaded record schemas; handled is false otherwise.
func showRecord(env *Env, rel *Release, name string, version int, format string) (handled bool, err error) {
	set := rel.Codec.RecordSchemas()
	if set == nil {
		return false, nil
	}
	r, ok := set.Lookup(name)
	if !ok {
		return false, nil
	}
	v := int16(-1)
	if version >= 0 {
		if version > 32767 || !r.Msg.Valid.Contains(int16(version)) {
			return true, usagef("%s has no version %d; valid versions are %s", r.Msg.Name, version, r.Msg.Valid)
		}
		v = int16(version)
	}
	p, err := recpage.Build(rel.Codec, r, v)
	if err != nil {
		return true, failure{err}
	}
	if format == "json" {
		doc, err := jsonr.RecordPageDocument(p)
		if err == nil {
			_, err = env.Stdout.Write(doc)
		}
		return true, err
	}
	if err := text.RecordPage(env.Stdout, p); err != nil {
		return true, failure{fmt.Errorf("writing: %w", err)}
	}
	return true, nil
}

// recordHint is added to an unknown-API error for a name that looks like a
// record type while no record schemas are loaded.
func recordHint(rel *Release, name string, err error) error {
	if rel.Codec.RecordSchemas() != nil {
		return err
	}
	for _, suffix := range []string{"Key", "Value", "Record", "Data"} {
		if strings.HasSuffix(name, suffix) {
			return usagef("%v (for the record types of internal topics, give --records DIR, e.g. ../shared/kafka-records/4.3)", err)
		}
	}
	return err
}

// specRecords loads the record schemas that the spec location at path
// holds (spec.Source.Records); nil when it holds none.
func specRecords(path string) (*recschema.Set, error) {
	if path == "" {
		return nil, nil
	}
	src, err := spec.Open(path)
	if err != nil {
		return nil, nil // the message specs loaded from it; it has no records to add
	}
	defer src.Close()
	var set *recschema.Set
	for _, r := range src.Records {
		if set, err = recschema.FromFS(set, r.Module, r.FS); err != nil {
			return nil, fmt.Errorf("record schemas of %s: %w", path, err)
		}
	}
	return set, nil
}
