package tlsdecrypt

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"

	"github.com/manifester/manifester/internal/textenc"
)

// MaxLine is the longest key log line read; a longer one is an error (a
// real line is under 250 bytes).
const MaxLine = 4096

// maxSecret is the longest secret a key log line may carry, in bytes (a
// TLS 1.2 master secret is 48, a TLS 1.3 traffic secret 32 or 48).
const maxSecret = 64

// KeyLog holds the secrets of a TLS key log (the NSS key log format that
// SSLKEYLOGFILE, Go's tls.Config.KeyLogWriter, OpenSSL's -keylogfile and
// Wireshark read), by client random. The zero KeyLog is not usable; make
// one with [NewKeyLog]. It is not safe for concurrent use.
type KeyLog struct {
	byRandom map[[32]byte]*secrets
	// unused counts well-formed lines this package has no use for (RSA
	// pre-master secrets, exporter and early secrets, unknown labels).
	unused int
	// traffic13: a TLS 1.3 application traffic secret was read.
	traffic13 bool
	// masters are the TLS 1.2 master secrets in the order read: those
	// findMaster tries, most recent first. resumeWork counts its trials,
	// resumeEarned the bytes fed to the streams that use the key log
	// (see spendResume).
	masters                  [][]byte
	resumeWork, resumeEarned int64
}

// The budget of the search for resumed TLS 1.2 sessions' master secrets
// (findMaster), over every stream that uses a key log: resumeBase
// trials, and one more for every resumePerTrial bytes fed. A trial (a
// key expansion and the opening of a short record) costs about as much
// as reading resumePerTrial bytes.
const (
	resumeBase     = 4096
	resumePerTrial = 64
)

// spendResume takes one trial from the budget, reporting whether there
// was one.
func (k *KeyLog) spendResume() bool {
	if k.resumeWork >= resumeBase+k.resumeEarned/resumePerTrial {
		return false
	}
	k.resumeWork++
	return true
}

// secrets are what a key log says of one client random.
type secrets struct {
	master []byte // TLS 1.2: CLIENT_RANDOM
	// TLS 1.3 traffic secrets.
	clientHS, serverHS, clientAP, serverAP []byte
}

// NewKeyLog returns an empty key log.
func NewKeyLog() *KeyLog { return &KeyLog{byRandom: map[[32]byte]*secrets{}} }

// Sessions returns the number of client randoms the key log has a secret
// for.
func (k *KeyLog) Sessions() int { return len(k.byRandom) }

// Unused returns the number of well-formed lines read that carry nothing
// this package decrypts with (RSA pre-master secrets, exporter and early
// traffic secrets, labels it does not know).
func (k *KeyLog) Unused() int { return k.unused }

// ErrLine is wrapped by the error of a line that is not a key log line.
var ErrLine = errors.New("not a key log line (want LABEL CLIENT_RANDOM SECRET, the last two in hex)")

// Read adds the lines of a key log read from r; name (a file name, or
// "the capture's secrets block") starts the errors, which name the line.
// Blank lines and lines starting with # are skipped; a line of another
// shape is an error, and so is one longer than [MaxLine]. The lines
// before an error are kept. A key log saved on Windows is read too: after
// a UTF-8 byte order mark (Notepad), as UTF-16 after its mark (PowerShell
// 5's ">"), with CRLF line ends.
func (k *KeyLog) Read(r io.Reader, name string) error {
	sc := bufio.NewScanner(textenc.NewReader(bufio.NewReader(r)))
	sc.Buffer(make([]byte, 0, 512), MaxLine)
	n := 0
	for sc.Scan() {
		n++
		if err := k.line(sc.Bytes()); err != nil {
			return fmt.Errorf("%s:%d: %w", name, n, err)
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("%s:%d: a line longer than %d bytes: %w", name, n+1, MaxLine, ErrLine)
		}
		return fmt.Errorf("reading %s: %w", name, err)
	}
	return nil
}

// line adds one line.
func (k *KeyLog) line(b []byte) error {
	b = bytes.TrimRight(b, "\r")
	if t := bytes.TrimSpace(b); len(t) == 0 || t[0] == '#' {
		return nil
	}
	f := bytes.Fields(b)
	if len(f) != 3 {
		return fmt.Errorf("%d fields: %w", len(f), ErrLine)
	}
	label := string(f[0])
	id, err := hexField(f[1], "client random")
	if err != nil {
		return err
	}
	secret, err := hexField(f[2], "secret")
	if err != nil {
		return err
	}
	if label == "RSA" { // an encrypted pre-master secret's first 8 bytes
		if len(id) != 8 {
			return fmt.Errorf("RSA: %d bytes of encrypted pre-master secret, want 8: %w", len(id), ErrLine)
		}
		k.unused++
		return nil
	}
	if len(id) != 32 {
		return fmt.Errorf("%s: a client random of %d bytes, want 32: %w", label, len(id), ErrLine)
	}
	if len(secret) == 0 || len(secret) > maxSecret {
		return fmt.Errorf("%s: a secret of %d bytes, want 1 to %d: %w", label, len(secret), maxSecret, ErrLine)
	}
	var slot *[]byte
	s := k.byRandom[[32]byte(id)]
	if s == nil {
		s = &secrets{}
	}
	switch label {
	case "CLIENT_RANDOM":
		slot = &s.master
		k.masters = append(k.masters, secret)
	case "CLIENT_HANDSHAKE_TRAFFIC_SECRET":
		slot = &s.clientHS
	case "SERVER_HANDSHAKE_TRAFFIC_SECRET":
		slot = &s.serverHS
	case "CLIENT_TRAFFIC_SECRET_0":
		slot, k.traffic13 = &s.clientAP, true
	case "SERVER_TRAFFIC_SECRET_0":
		slot, k.traffic13 = &s.serverAP, true
	default: // EXPORTER_SECRET, CLIENT_EARLY_TRAFFIC_SECRET, ...
		k.unused++
		return nil
	}
	*slot = secret
	k.byRandom[[32]byte(id)] = s
	return nil
}

// hexField decodes a hex field of at most 2*maxSecret digits.
func hexField(f []byte, what string) ([]byte, error) {
	if len(f) > 2*maxSecret {
		return nil, fmt.Errorf("a %s of %d hex digits: %w", what, len(f), ErrLine)
	}
	b := make([]byte, hex.DecodedLen(len(f)))
	if _, err := hex.Decode(b, f); err != nil {
		return nil, fmt.Errorf("the %s: %v: %w", what, err, ErrLine)
	}
	return b, nil
}

// Traffic13 reports whether the key log holds a TLS 1.3 application
// traffic secret (what a session joined midway needs).
func (k *KeyLog) Traffic13() bool {
	if k == nil {
		return false
	}
	return k.traffic13
}

// lookup returns the secrets of a client random, or nil.
func (k *KeyLog) lookup(random []byte) *secrets {
	if k == nil || len(random) != 32 {
		return nil
	}
	return k.byRandom[[32]byte(random)]
}
