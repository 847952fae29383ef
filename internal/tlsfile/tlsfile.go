// Package tlsfile says why a TLS certificate or key file will not load, in words an operator can
// act on: crypto/tls says "failed to find any PEM data in certificate input" for a DER certificate
// and for a certificate and key given swapped alike, naming neither the file nor the fix. The
// collector distribution checks its components' files with it at validate, the streaming proxy its
// own at start.
package tlsfile

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"slices"
	"strings"
)

// blockTypes returns the types of data's PEM blocks, in order.
func blockTypes(data []byte) []string {
	var types []string
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			return types
		}
		types = append(types, b.Type)
	}
}

// holds says what a PEM file that lacks the block it should hold holds instead, from its blocks'
// types.
func holds(types []string) string {
	for _, t := range types {
		if strings.HasSuffix(t, "PRIVATE KEY") {
			return fmt.Sprintf("it holds a private key (a %q block)", t)
		}
	}
	if len(types) == 0 {
		return "it holds no PEM block"
	}
	return fmt.Sprintf("it holds a %q block", types[0])
}

// CA says why the CA file name, holding data, gives no certificate to trust, or nil when it gives
// one: empty, a DER certificate (with the command that converts it), a block that does not parse,
// a private key or other blocks.
func CA(name string, data []byte) error {
	if x509.NewCertPool().AppendCertsFromPEM(data) {
		return nil
	}
	const fix = "give the CA's certificate as a PEM file (-----BEGIN CERTIFICATE-----)"
	types := blockTypes(data)
	switch {
	case len(strings.TrimSpace(string(data))) == 0:
		return fmt.Errorf("%q is not a PEM certificate: it is empty; %s", name, fix)
	case len(types) == 0 && certsDER(data):
		return fmt.Errorf("%q is not a PEM certificate: it is a DER (binary) certificate; convert it (openssl x509 -inform der -in %s -out ca.pem) and give the PEM file", name, name)
	case slices.Contains(types, "CERTIFICATE"):
		return fmt.Errorf("%q is not a PEM certificate: its CERTIFICATE block does not parse; %s", name, fix)
	}
	return fmt.Errorf("%q is not a PEM certificate: %s; %s", name, holds(types), fix)
}

// certsDER reports whether data is one or more certificates in DER, as some CAs hand them out.
func certsDER(data []byte) bool {
	_, err := x509.ParseCertificates(data)
	return err == nil
}

// KeyPair says why the certificate file and the key file, holding cert and key, are not a
// certificate and its private key, or nil when they are: a DER certificate (with the command that
// converts it), the two given swapped, or tls.X509KeyPair's reason. certSetting and keySetting
// name where the user gives each file (cert_file and key_file, -tls-cert and -tls-key).
func KeyPair(certSetting, certName string, cert []byte, keySetting, keyName string, key []byte) error {
	_, err := tls.X509KeyPair(cert, key)
	if err == nil {
		return nil
	}
	certTypes, keyTypes := blockTypes(cert), blockTypes(key)
	hasKey := func(types []string) bool {
		return slices.ContainsFunc(types, func(t string) bool { return strings.HasSuffix(t, "PRIVATE KEY") })
	}
	if len(certTypes) == 0 && certsDER(cert) {
		// tls.X509KeyPair says only "failed to find any PEM data in certificate input".
		return fmt.Errorf("%q is a DER (binary) certificate, where %s takes PEM; convert it (openssl x509 -inform der -in %s -out cert.pem) and give the PEM file", certName, certSetting, certName)
	}
	if !slices.Contains(certTypes, "CERTIFICATE") && hasKey(certTypes) && slices.Contains(keyTypes, "CERTIFICATE") && !hasKey(keyTypes) {
		return fmt.Errorf("%q holds a private key and %q a certificate: the two are given swapped; give the certificate in %s and its key in %s", certName, keyName, certSetting, keySetting)
	}
	return fmt.Errorf("%q and %q are not a certificate and its private key (%v); give the certificate's PEM file in %s and the PEM file of its private key in %s", certName, keyName, err, certSetting, keySetting)
}
