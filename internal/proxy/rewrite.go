package proxy

import (
	"strconv"
	"sync/atomic"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/schema"
)

// A broker address is advertised by a struct with a string field Host, an
// integer field Port and a node id field (NodeId, BrokerId, or an int32 of
// entityType brokerId such as UpdateRaftVoter's LeaderId): Metadata
// brokers, FindCoordinator (top level and Coordinators), DescribeCluster
// brokers, and the NodeEndpoints of Produce, Fetch, ShareFetch,
// ShareAcknowledge and the KRaft quorum APIs. Structs with a Host and Port
// but no node id (Kafka Streams user endpoints, quorum listeners) and ACL
// Host fields are not broker addresses and are left alone.

// addrFields locates the host, port and node id of an address struct.
type addrFields struct {
	host, port, node *schema.Field
}

func addressOf(s *schema.Struct) (addrFields, bool) {
	var a addrFields
	for _, f := range s.Fields {
		switch {
		case f.Name == "Host" && f.Type.Kind == schema.KindString:
			a.host = f
		case f.Name == "Port" && (f.Type.Kind == schema.KindInt32 || f.Type.Kind == schema.KindUint16):
			a.port = f
		case f.Type.Kind == schema.KindInt32 && (f.Name == "NodeId" || f.Name == "BrokerId" || f.EntityType == "brokerId"):
			a.node = f
		}
	}
	return a, a.host != nil && a.port != nil && a.node != nil
}

// advertises reports whether message m holds broker addresses at some
// version, so its responses must be inspected whole.
func advertises(m *schema.Message) bool {
	for v := m.Valid.Lo; v <= m.Valid.Hi && v >= m.Valid.Lo; v++ {
		if advertisesAt(m, v) {
			return true
		}
		if v == schema.MaxVersion {
			break
		}
	}
	return false
}

// advertisesAt reports whether message m holds broker addresses at
// version v: an address struct reachable through fields present at v,
// with its Host and Port present at v.
func advertisesAt(m *schema.Message, v int16) bool {
	return m != nil && reachesAddress(m.Body, v, map[*schema.Struct]bool{})
}

// reachesAddress reports whether s is an address struct at version v or
// holds one through fields present at v (seen: the structs walked).
func reachesAddress(s *schema.Struct, v int16, seen map[*schema.Struct]bool) bool {
	if s == nil || seen[s] {
		return false
	}
	seen[s] = true
	if isAddressAt(s, v) {
		return true
	}
	for _, f := range s.Fields {
		if f.Versions.Contains(v) && reachesAddress(f.Type.ElemStruct(), v, seen) {
			return true
		}
	}
	return false
}

// isAddressAt reports whether s is an address struct whose Host and Port
// are present at version v.
func isAddressAt(s *schema.Struct, v int16) bool {
	a, ok := addressOf(s)
	return ok && a.host.Versions.Contains(v) && a.port.Versions.Contains(v)
}

// tailOnly reports whether every broker address of message m at
// version v sits under a top-level tagged field (Fetch and Produce
// responses' NodeEndpoints, KIP-951): those come last in the frame, so
// such a response can be forwarded as it arrives but for its tail
// (tailHold). A body that is itself an address (FindCoordinator before
// v4) is not.
func tailOnly(m *schema.Message, v int16) bool {
	if !advertisesAt(m, v) || isAddressAt(m.Body, v) {
		return false
	}
	seen := map[*schema.Struct]bool{m.Body: true}
	for _, f := range m.Body.Fields {
		if f.Versions.Contains(v) && !f.IsTagged(v) && reachesAddress(f.Type.ElemStruct(), v, seen) {
			return false
		}
	}
	return true
}

// tailTable says which held responses (API, version) are tail-held
// (tailOnly); a true entry turns false for good once a rewritten tail
// did not fit (conn.tailMisfit).
func tailTable(reg *schema.Registry, hold map[holdKey]bool) map[holdKey]*atomic.Bool {
	out := map[holdKey]*atomic.Bool{}
	for k := range hold {
		if api, ok := reg.API(k.key); ok && tailOnly(api.Response, k.version) {
			out[k] = new(atomic.Bool)
			out[k].Store(true)
		}
	}
	return out
}

// holdKey is an API key and version.
type holdKey struct{ key, version int16 }

// holdTable says which (API, version) responses advertise addresses.
func holdTable(reg *schema.Registry) map[holdKey]bool {
	out := map[holdKey]bool{}
	for _, api := range AdvertisingAPIs(reg) {
		m := api.Response
		for v := m.Valid.Lo; v <= m.Valid.Hi && v >= m.Valid.Lo; v++ {
			if advertisesAt(m, v) {
				out[holdKey{api.Key, v}] = true
			}
			if v == schema.MaxVersion {
				break
			}
		}
	}
	return out
}

// AdvertisingAPIs lists the APIs of reg whose responses advertise broker
// addresses, in key order.
func AdvertisingAPIs(reg *schema.Registry) []*schema.API {
	var out []*schema.API
	for _, api := range reg.APIs {
		if api.Response != nil && !api.Reserved() && advertises(api.Response) {
			out = append(out, api)
		}
	}
	return out
}

// mapFunc returns the address clients should use instead of the address
// advertised for broker node (-1 when the struct has no node id at this
// version), or ok false to leave it.
type mapFunc func(node int32, host string, port int32) (newHost string, newPort int32, ok bool)

// rewriteAddresses replaces every broker address in the body of a decoded
// frame and reports whether anything changed.
// Decoded values may share default sub-values, so the body is cloned
// before the first change.
func rewriteAddresses(f *codec.Frame, remap mapFunc) bool {
	m := f.Message()
	if !rewriteStruct(m.Body, &f.Body, f.Version, remap, true, 0) {
		return false
	}
	f.Body = f.Body.Clone()
	return rewriteStruct(m.Body, &f.Body, f.Version, remap, false, 0)
}

func rewriteStruct(s *schema.Struct, v *codec.Value, version int16, remap mapFunc, dry bool, depth int) bool {
	if s == nil || depth > 32 || v.IsNull() || len(v.Kids()) != len(s.Fields) {
		return false
	}
	changed := false
	if a, ok := addressOf(s); ok && a.host.Versions.Contains(version) && a.port.Versions.Contains(version) {
		hv, pv := &v.Kids()[a.host.Index], &v.Kids()[a.port.Index]
		node := int32(-1)
		if a.node.Versions.Contains(version) {
			node = int32(v.Kids()[a.node.Index].Int())
		}
		// Kafka's "no node" (node -1 at "" port -1, a FindCoordinator
		// error's) or a port no client can dial is no broker to give a
		// listener: it is left as the broker sent it.
		host, port := string(hv.Bytes()), pv.Int()
		if dialable(host, port) {
			if h, p, ok := remap(node, host, int32(port)); ok && (h != host || int64(p) != port) {
				if dry {
					return true
				}
				hv.SetBytes([]byte(h))
				pv.SetInt(int64(p))
				changed = true
			}
		}
	}
	for _, f := range s.Fields {
		es := f.Type.ElemStruct()
		if es == nil || !f.Versions.Contains(version) {
			continue
		}
		fv := &v.Kids()[f.Index]
		if f.Type.Kind == schema.KindArray {
			for i := range fv.Kids() {
				if rewriteStruct(es, &fv.Kids()[i], version, remap, dry, depth+1) {
					changed = true
					if dry {
						return true
					}
				}
			}
		} else if rewriteStruct(es, fv, version, remap, dry, depth+1) {
			changed = true
			if dry {
				return true
			}
		}
	}
	return changed
}

// dialable reports whether host and port can be a broker's address: a
// host that is not empty and a TCP port (1 to 65535).
func dialable(host string, port int64) bool {
	return len(host) > 0 && port >= 1 && port <= 65535
}

func hostPort(host string, port int32) string {
	return joinHostPort(host, strconv.Itoa(int(port)))
}
