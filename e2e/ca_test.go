package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// privateCA is a certificate authority of the test's own, as an operator's private CA: nothing
// on the machine trusts it. Its certificate and the ones it issues are PEM files in a temporary
// directory; no key is checked in.
//
// It is also what the tests use for any TLS server on loopback (a gateway's receivers, a backend):
// a client verifies the server with pool, or a collector with file.
type privateCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	dir  string
	file string         // the CA's certificate (PEM), what OTLP_CA_FILE and TLS_CLIENT_CA_FILE name
	pool *x509.CertPool // the CA alone, for a Go client or server that verifies with it
}

var serial atomic.Int64

func nextSerial() *big.Int { return big.NewInt(serial.Add(1)) }

func newPrivateCA(t *testing.T) *privateCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: nextSerial(), Subject: pkix.Name{CommonName: "otelitl-e2e private CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	ca := &privateCA{cert: cert, key: key, dir: t.TempDir(), pool: x509.NewCertPool()}
	ca.file = writePEM(t, ca.dir, "ca.pem", "CERTIFICATE", der)
	ca.pool.AddCert(cert)
	return ca
}

// loopback is the address every TLS server of the tests listens on, and its certificates name.
var loopback = net.IPv4(127, 0, 0, 1)

// server issues a server certificate for 127.0.0.1 (issue).
func (ca *privateCA) server(t *testing.T, name string) (certFile, keyFile string) {
	t.Helper()
	return ca.issue(t, name, x509.ExtKeyUsageServerAuth, loopback)
}

// client issues a client certificate (issue), what OTLP_CLIENT_CERT_FILE and OTLP_CLIENT_KEY_FILE name.
func (ca *privateCA) client(t *testing.T, name string) (certFile, keyFile string) {
	t.Helper()
	return ca.issue(t, name, x509.ExtKeyUsageClientAuth)
}

// issue writes a certificate the CA signs, for usage (server or client authentication) and the
// given addresses, and its key; it returns their paths.
func (ca *privateCA) issue(t *testing.T, name string, usage x509.ExtKeyUsage, ips ...net.IP) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: nextSerial(), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: ips, KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return writePEM(t, ca.dir, name+".pem", "CERTIFICATE", der), writePEM(t, ca.dir, name+"-key.pem", "EC PRIVATE KEY", kb)
}

func writePEM(t *testing.T, dir, name, typ string, der []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
