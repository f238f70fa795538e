// age-header: age v1.3.1's own detached-header functions as a command, the judge of hyperseal's
// `header extract` and `header decrypt` (crates/hyperseal-cli/tests/age_header.rs).
//
//	age-header DIR VECTOR...
//
// Each VECTOR is a C2SP CCTV age test vector (its "key: value" lines, a blank line, the file,
// perhaps zlib-compressed). For each, one JSON line: the name, its expect line, identities and
// passphrase, age.ExtractHeader's bytes (base64) or its error, and age.DecryptHeader's file key
// (hex) or its error; the file key is printed because these are public test vectors. Into DIR
// go the file itself (NAME.age, decompressed) and, where age opens the whole file with
// NewInjectedFileKeyIdentity and that key, the plaintext (NAME.plain).
package main

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"filippo.io/age"
)

type result struct {
	Name         string   `json:"name"`
	Expect       string   `json:"expect"`
	Identities   []string `json:"identities"`
	Passphrase   *string  `json:"passphrase"`
	Header       []byte   `json:"header"`
	ExtractError *string  `json:"extract_error"`
	FileKey      *string  `json:"file_key"`
	DecryptError *string  `json:"decrypt_error"`
}

func main() {
	out := json.NewEncoder(os.Stdout)
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: age-header DIR VECTOR...")
		os.Exit(2)
	}
	dir := os.Args[1]
	for _, path := range os.Args[2:] {
		r, err := judge(dir, path)
		if err != nil {
			fmt.Fprintf(os.Stderr, "age-header: %s: %v\n", path, err)
			os.Exit(1)
		}
		out.Encode(r)
	}
}

func judge(dir, path string) (*result, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	head, file, ok := bytes.Cut(raw, []byte("\n\n"))
	if !ok {
		return nil, fmt.Errorf("no blank line after the vector's header")
	}
	var ids []age.Identity
	r := &result{Name: filepath.Base(path)}
	sc := bufio.NewScanner(bytes.NewReader(head))
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), ": ")
		switch k {
		case "expect":
			r.Expect = v
		case "identity":
			r.Identities = append(r.Identities, v)
			id, err := age.ParseX25519Identity(v)
			if err != nil {
				hid, herr := age.ParseHybridIdentity(v)
				if herr != nil {
					return nil, fmt.Errorf("identity: %v", err)
				}
				ids = append(ids, hid)
				continue
			}
			ids = append(ids, id)
		case "passphrase":
			r.Passphrase = &v
			id, err := age.NewScryptIdentity(v)
			if err != nil {
				return nil, err
			}
			ids = append(ids, id)
		case "compressed":
			z, err := zlib.NewReader(bytes.NewReader(file))
			if err != nil {
				return nil, err
			}
			if file, err = io.ReadAll(z); err != nil {
				return nil, err
			}
		}
	}
	if err := os.WriteFile(filepath.Join(dir, r.Name+".age"), file, 0o600); err != nil {
		return nil, err
	}
	hdr, err := age.ExtractHeader(bytes.NewReader(file))
	if err != nil {
		msg := err.Error()
		r.ExtractError = &msg
	} else {
		r.Header = hdr
	}
	// DecryptHeader reads the header at the start of what it is given, as ExtractHeader does;
	// given the whole file it answers for the header alone.
	key, err := age.DecryptHeader(file, ids...)
	if err != nil {
		msg := err.Error()
		r.DecryptError = &msg
	} else {
		k := hex.EncodeToString(key)
		r.FileKey = &k
		if plain, err := age.Decrypt(bytes.NewReader(file), age.NewInjectedFileKeyIdentity(key)); err == nil {
			if out, err := io.ReadAll(plain); err == nil {
				if err := os.WriteFile(filepath.Join(dir, r.Name+".plain"), out, 0o600); err != nil {
					return nil, err
				}
			}
		}
	}
	return r, nil
}
