package policy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// DecodeSnapshot decodes one JSON snapshot strictly: a key that names no
// field (a typo such as "thruoghput"), a key that names one only when case
// is ignored ("GPUs" for "gpus"), or data after the snapshot is an error
// wrapping ErrInvalidSnapshot that names the key and where it is
// ("jobs[3].thruoghput"). json.Unmarshal into a Snapshot is the lenient
// way: it ignores unknown keys and matches keys in any case.
func DecodeSnapshot(data []byte) (*Snapshot, error) {
	var raw any
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	if err := d.Decode(&raw); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidSnapshot, err)
	}
	if d.More() {
		return nil, fmt.Errorf("%w: trailing data after the snapshot", ErrInvalidSnapshot)
	}
	if err := checkKeys(raw, reflect.TypeFor[Snapshot](), ""); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidSnapshot, err)
	}
	s := new(Snapshot)
	if err := json.Unmarshal(data, s); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidSnapshot, err)
	}
	return s, nil
}

// extraKeys are the keys that types with their own JSON methods read
// besides their fields' (times in seconds, json.go).
var extraKeys = map[reflect.Type][]string{
	reflect.TypeFor[Snapshot](): {"now"},
	reflect.TypeFor[Job]():      {"arrival", "deadline"},
}

// checkKeys checks that every object key in v names a field of type t, in its
// exact case, recursively; at is the path of v, for the error.
func checkKeys(v any, t reflect.Type, at string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch x := v.(type) {
	case []any:
		if t.Kind() != reflect.Slice && t.Kind() != reflect.Array {
			return nil // json.Unmarshal reports the mismatch
		}
		for i, e := range x {
			if err := checkKeys(e, t.Elem(), fmt.Sprintf("%s[%d]", at, i)); err != nil {
				return err
			}
		}
	case map[string]any:
		switch t.Kind() {
		case reflect.Map:
			for k, e := range x {
				if err := checkKeys(e, t.Elem(), join(at, k)); err != nil {
					return err
				}
			}
		case reflect.Struct:
			return checkObject(x, t, at)
		}
	}
	return nil
}

// checkObject checks the keys of object x against struct type t.
func checkObject(x map[string]any, t reflect.Type, at string) error {
	fields := jsonFields(t)
	for k, e := range x {
		ft, ok := fields[k]
		if !ok {
			for name := range fields {
				if strings.EqualFold(name, k) {
					return fmt.Errorf("%s: key %q: write it %q (keys are case-sensitive)", join(at, k), k, name)
				}
			}
			return fmt.Errorf("%s: unknown key %q", join(at, k), k)
		}
		if err := checkKeys(e, ft, join(at, k)); err != nil {
			return err
		}
	}
	return nil
}

// jsonFields maps the JSON keys of struct type t to their types, embedded
// structs' included.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := make(map[string]reflect.Type)
	for _, k := range extraKeys[t] {
		out[k] = reflect.TypeFor[float64]()
	}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-" || !f.IsExported() && !f.Anonymous:
			continue
		case f.Anonymous && name == "":
			for k, ft := range jsonFields(f.Type) {
				out[k] = ft
			}
			continue
		case name == "":
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

func join(at, k string) string {
	if at == "" {
		return k
	}
	return at + "." + k
}
