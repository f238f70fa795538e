// age-plugin-hstest: a test plugin for hyperseal's plugin client, built on age's own
// filippo.io/age/plugin package (so the plugin side of the protocol is age's, not ours).
//
// Keys are native X25519 keys carried inside plugin encodings: the recipient age1hstest1… holds
// the bytes of an "age1…" string, the identity AGE-PLUGIN-HSTEST-1… the bytes of an
// "AGE-SECRET-KEY-1…" string; the identity without data (-j hstest) is a fixed test key. Stanzas
// are X25519 stanzas renamed "hstest-x25519", so that only this plugin can open them.
//
// HSTEST_MODE (inherited from the client's environment) picks a behaviour:
//
//	ui       ask every UI request (msg, confirm, request-public, request-secret) and check the
//	         answers ("1"/yes, "pub-ok", "sec-ok") before wrapping or unwrapping
//	pq       wrap with the label "postquantum"
//	error    refuse (an error stanza)
//	crash    exit 3 with a message on stderr
//	hang     never answer
//	spawn    start a child of its own (this program again, in "beat" mode), then never answer
//	beat     (the child) append a byte to the file $HSTEST_BEAT every 50 ms, forever: a file that
//	         stops growing shows the child has ended
//	garbage  print something that is not a stanza
//	pin      ask for a PIN (request-secret) the first time a run of this program unwraps, as a
//	         hardware key's plugin keeps it for as long as it runs: "1234", or the first line
//	         of the file $HSTEST_PIN_FILE when set (a test changes it behind a cache)
//	confirm  ask a confirmation ("use hstest?", as a touch would be) on every unwrap
//
// With HSTEST_COUNT set, every identity-v1 run of this program appends "run" to that file,
// every PIN prompt "prompt", every wrong PIN it was given "fail" and every confirmation
// "confirm", so a test can count them.
//
// Run with --keygen to print a fresh identity and its recipient.
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"filippo.io/age"
	"filippo.io/age/plugin"
)

// A throw-away key for the identity without data (-j hstest). Test use only.
const fixedIdentity = "AGE-SECRET-KEY-1SRDP9WSAG9MJQY2YMGELHS08UHGAN4UAG97SF3JMEJHSWDGZKZ5SZSFPEV"

const stanzaType = "hstest-x25519"

var p *plugin.Plugin

// misbehave acts out the crash, hang and garbage modes, and the UI checks.
func misbehave() error {
	switch os.Getenv("HSTEST_MODE") {
	case "crash":
		fmt.Fprintln(os.Stderr, "hstest crashed on purpose")
		os.Exit(3)
	case "hang":
		time.Sleep(time.Hour)
	case "spawn":
		child := exec.Command(os.Args[0])
		child.Env = append(os.Environ(), "HSTEST_MODE=beat")
		if err := child.Start(); err != nil {
			return err
		}
		time.Sleep(time.Hour)
	case "garbage":
		fmt.Println("this is not an age stanza")
		os.Exit(0)
	case "error":
		return errors.New("hstest refuses on purpose")
	case "ui":
		if err := p.DisplayMessage("hello from hstest"); err != nil {
			return err
		}
		yes, err := p.Confirm("proceed with hstest?", "yes please", "no thanks")
		if err != nil || !yes {
			return fmt.Errorf("confirmation refused (%v)", err)
		}
		if v, err := p.RequestValue("type pub-ok", false); err != nil || v != "pub-ok" {
			return fmt.Errorf("wrong public value %q (%v)", v, err)
		}
		if v, err := p.RequestValue("type sec-ok", true); err != nil || v != "sec-ok" {
			return fmt.Errorf("wrong secret value (%v)", err)
		}
	}
	return nil
}

type recipient struct{ r *age.X25519Recipient }

func (r recipient) Wrap(fileKey []byte) ([]*age.Stanza, error) {
	s, _, err := r.WrapWithLabels(fileKey)
	return s, err
}

func (r recipient) WrapWithLabels(fileKey []byte) ([]*age.Stanza, []string, error) {
	if err := misbehave(); err != nil {
		return nil, nil, err
	}
	stanzas, err := r.r.Wrap(fileKey)
	if err != nil {
		return nil, nil, err
	}
	for _, s := range stanzas {
		s.Type = stanzaType
	}
	var labels []string
	if os.Getenv("HSTEST_MODE") == "pq" {
		labels = []string{"postquantum"}
	}
	return stanzas, labels, nil
}

type identity struct{ i *age.X25519Identity }

// unlocked: this run has been given the PIN (pin mode).
var unlocked bool

// count appends what happened to $HSTEST_COUNT, if set.
func count(what string) {
	if path := os.Getenv("HSTEST_COUNT"); path != "" {
		if f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			fmt.Fprintln(f, what)
			f.Close()
		}
	}
}

// pin asks for the PIN once per run; a wrong one given is counted as a card counts it.
func pin() error {
	switch os.Getenv("HSTEST_MODE") {
	case "confirm":
		count("confirm")
		yes, err := p.Confirm("use hstest?", "yes", "no")
		if err != nil || !yes {
			return fmt.Errorf("not confirmed (%v)", err)
		}
		return nil
	case "pin":
	default:
		return nil
	}
	if unlocked {
		return nil
	}
	want := "1234"
	if path := os.Getenv("HSTEST_PIN_FILE"); path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		want = strings.TrimSpace(string(b))
	}
	count("prompt")
	v, err := p.RequestValue("PIN for hstest", true)
	if err != nil {
		return fmt.Errorf("no PIN (%v)", err)
	}
	if v != want {
		count("fail")
		return errors.New("wrong PIN")
	}
	unlocked = true
	return nil
}

func (i identity) Unwrap(stanzas []*age.Stanza) ([]byte, error) {
	var ours []*age.Stanza
	for _, s := range stanzas {
		if s.Type == stanzaType {
			ours = append(ours, &age.Stanza{Type: "X25519", Args: s.Args, Body: s.Body})
		}
	}
	if len(ours) == 0 {
		return nil, age.ErrIncorrectIdentity
	}
	if err := misbehave(); err != nil {
		return nil, err
	}
	if err := pin(); err != nil {
		return nil, err
	}
	return i.i.Unwrap(ours)
}

func parseIdentity(data []byte) (*age.X25519Identity, error) {
	if len(data) == 0 {
		return age.ParseX25519Identity(fixedIdentity)
	}
	return age.ParseX25519Identity(string(data))
}

// beat appends to $HSTEST_BEAT until killed.
func beat() {
	for {
		if f, err := os.OpenFile(os.Getenv("HSTEST_BEAT"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			f.Write([]byte{'.'})
			f.Close()
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func main() {
	if os.Getenv("HSTEST_MODE") == "beat" {
		beat()
	}
	var err error
	if p, err = plugin.New("hstest"); err != nil {
		panic(err)
	}
	if len(os.Args) == 2 && os.Args[1] == "--keygen" {
		id, _ := age.GenerateX25519Identity()
		fmt.Println(plugin.EncodeIdentity("hstest", []byte(id.String())))
		fmt.Println(plugin.EncodeRecipient("hstest", []byte(id.Recipient().String())))
		return
	}
	p.HandleRecipient(func(data []byte) (age.Recipient, error) {
		if !strings.HasPrefix(string(data), "age1") {
			return nil, errors.New("not an hstest recipient")
		}
		r, err := age.ParseX25519Recipient(string(data))
		return recipient{r}, err
	})
	p.HandleIdentityAsRecipient(func(data []byte) (age.Recipient, error) {
		i, err := parseIdentity(data)
		if err != nil {
			return nil, err
		}
		return recipient{i.Recipient()}, nil
	})
	p.HandleIdentity(func(data []byte) (age.Identity, error) {
		count("run")
		i, err := parseIdentity(data)
		return identity{i}, err
	})
	os.Exit(p.Main())
}
