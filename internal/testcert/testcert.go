// Package testcert makes the certificates TLS tests need, at test time:
// a CA, a server certificate for localhost, 127.0.0.1 and ::1 and a
// client certificate, both signed by the CA, written as PEM files.
// Nothing is checked in.
package testcert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Set is a CA and the certificates it signed, with their PEM files.
type Set struct {
	// CAFile, ServerCert, ServerKey, ClientCert and ClientKey are PEM
	// files in the test's temporary directory.
	CAFile, ServerCert, ServerKey, ClientCert, ClientKey string
	// Pool holds the CA.
	Pool *x509.CertPool
	// Server and Client are the key pairs.
	Server, Client tls.Certificate
}

// New makes a Set named name ("broker", "proxy") in a temporary
// directory of t.
func New(t testing.TB, name string) *Set {
	t.Helper()
	dir := t.TempDir()
	caKey := key(t)
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name + " test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	s := &Set{Pool: x509.NewCertPool()}
	s.Pool.AddCert(ca)
	s.CAFile = write(t, dir, "ca.pem", "CERTIFICATE", caDER)
	issue := func(serial int64, cn string, usage x509.ExtKeyUsage, server bool) (string, string, tls.Certificate) {
		k := key(t)
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
		}
		if server {
			tmpl.DNSNames = []string{"localhost", name + ".test"}
			tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		kder, err := x509.MarshalPKCS8PrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		certFile := write(t, dir, cn+".pem", "CERTIFICATE", der)
		keyFile := write(t, dir, cn+"-key.pem", "PRIVATE KEY", kder)
		pair, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			t.Fatal(err)
		}
		return certFile, keyFile, pair
	}
	s.ServerCert, s.ServerKey, s.Server = issue(2, name+"-server", x509.ExtKeyUsageServerAuth, true)
	s.ClientCert, s.ClientKey, s.Client = issue(3, name+"-client", x509.ExtKeyUsageClientAuth, false)
	return s
}

// ServerConfig serves the server certificate; with mutual, clients must
// present a certificate signed by the CA.
func (s *Set) ServerConfig(mutual bool) *tls.Config {
	c := &tls.Config{Certificates: []tls.Certificate{s.Server}, MinVersion: tls.VersionTLS12}
	if mutual {
		c.ClientAuth, c.ClientCAs = tls.RequireAndVerifyClientCert, s.Pool
	}
	return c
}

// ClientConfig trusts the CA (and presents the client certificate with
// mutual).
func (s *Set) ClientConfig(mutual bool) *tls.Config {
	c := &tls.Config{RootCAs: s.Pool, MinVersion: tls.VersionTLS12}
	if mutual {
		c.Certificates = []tls.Certificate{s.Client}
	}
	return c
}

func key(t testing.TB) *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func write(t testing.TB, dir, name, kind string, der []byte) string {
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
