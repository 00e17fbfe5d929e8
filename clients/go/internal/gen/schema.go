package main

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// document is the part of an OpenRPC document the generator reads.
type document struct {
	Info struct {
		Version string `json:"version"`
	} `json:"info"`
	ProtocolVersion string   `json:"x-protocol-version"`
	Methods         []method `json:"methods"`
	// What the server sends: the provider/produce request and the event/* notifications.
	ServerToClient []method    `json:"x-server-to-client"`
	Errors         []wireError `json:"x-errors"`
	Components     struct {
		Schemas map[string]json.RawMessage `json:"schemas"`
	} `json:"components"`
}

// wireError is one error code with the data.kind values it comes with.
type wireError struct {
	Code    int64  `json:"code"`
	Name    string `json:"name"`
	Message string `json:"message"`
	Kinds   []struct {
		Kind        string `json:"kind"`
		Description string `json:"description"`
	} `json:"kinds"`
}

type method struct {
	Name    string  `json:"name"`
	Summary string  `json:"summary"`
	Params  []param `json:"params"`
	// The params' own model, when the document names it.
	ParamsSchema json.RawMessage `json:"x-params-schema"`
	// A request the client sends itself (shutdown, within Close): no wrapper.
	NoWrapper bool `json:"x-no-wrapper"`
	Result    *struct {
		Schema json.RawMessage `json:"schema"`
	} `json:"result"`
}

type param struct {
	Name     string          `json:"name"`
	Required bool            `json:"required"`
	Schema   json.RawMessage `json:"schema"`
}

// schema is the subset of JSON Schema that pydantic emits for promptd's models. Anything it does
// not model maps to `any`, which is always correct, only less precise.
type schema struct {
	Ref         string
	Types       []string
	Properties  []property // in document order, which is the models' field order
	Required    map[string]bool
	Items       *schema
	Additional  *schema // additionalProperties as a schema
	FreeForm    bool    // additionalProperties: true
	AnyOf       []*schema
	AllOf       []*schema
	Enum        []json.RawMessage
	Const       json.RawMessage
	Default     json.RawMessage
	Description string
	// x-caller-type: the field holds the caller's own data, given back in the same shape; the
	// name is a type parameter standing for the field's type (its items' type, for an array).
	CallerType string
}

type property struct {
	Name   string
	Schema *schema
}

type rawSchema struct {
	Ref                  string            `json:"$ref"`
	Type                 json.RawMessage   `json:"type"`
	Properties           json.RawMessage   `json:"properties"`
	Required             []string          `json:"required"`
	Items                json.RawMessage   `json:"items"`
	AdditionalProperties json.RawMessage   `json:"additionalProperties"`
	AnyOf                []json.RawMessage `json:"anyOf"`
	OneOf                []json.RawMessage `json:"oneOf"`
	AllOf                []json.RawMessage `json:"allOf"`
	Enum                 []json.RawMessage `json:"enum"`
	Const                json.RawMessage   `json:"const"`
	Default              json.RawMessage   `json:"default"`
	Description          string            `json:"description"`
	CallerType           string            `json:"x-caller-type"`
}

func parseSchema(data json.RawMessage) (*schema, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return &schema{}, nil
	}
	if b := bytes.TrimSpace(data); bytes.Equal(b, []byte("true")) || bytes.Equal(b, []byte("false")) {
		return &schema{}, nil // a boolean schema: anything (or nothing) goes
	}
	var raw rawSchema
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, err
	}
	s := &schema{Ref: raw.Ref, Enum: raw.Enum, Const: raw.Const, Default: raw.Default, Description: raw.Description, CallerType: raw.CallerType}
	if len(raw.Type) > 0 {
		if raw.Type[0] == '[' {
			if err := json.Unmarshal(raw.Type, &s.Types); err != nil {
				return nil, err
			}
		} else {
			var one string
			if err := json.Unmarshal(raw.Type, &one); err != nil {
				return nil, err
			}
			s.Types = []string{one}
		}
	}
	s.Required = make(map[string]bool, len(raw.Required))
	for _, name := range raw.Required {
		s.Required[name] = true
	}
	if len(raw.Properties) > 0 {
		props, err := orderedObject(raw.Properties)
		if err != nil {
			return nil, fmt.Errorf("properties: %w", err)
		}
		for _, p := range props {
			sub, err := parseSchema(p.value)
			if err != nil {
				return nil, fmt.Errorf("property %s: %w", p.key, err)
			}
			s.Properties = append(s.Properties, property{Name: p.key, Schema: sub})
		}
	}
	var err error
	if len(raw.Items) > 0 && raw.Items[0] == '{' {
		if s.Items, err = parseSchema(raw.Items); err != nil {
			return nil, err
		}
	}
	switch ap := bytes.TrimSpace(raw.AdditionalProperties); {
	case bytes.Equal(ap, []byte("true")):
		s.FreeForm = true
	case len(ap) > 0 && ap[0] == '{':
		if s.Additional, err = parseSchema(ap); err != nil {
			return nil, err
		}
	}
	for _, group := range [][]json.RawMessage{raw.AnyOf, raw.OneOf} {
		for _, sub := range group {
			parsed, err := parseSchema(sub)
			if err != nil {
				return nil, err
			}
			s.AnyOf = append(s.AnyOf, parsed)
		}
	}
	for _, sub := range raw.AllOf {
		parsed, err := parseSchema(sub)
		if err != nil {
			return nil, err
		}
		s.AllOf = append(s.AllOf, parsed)
	}
	return s, nil
}

type member struct {
	key   string
	value json.RawMessage
}

// orderedObject reads a JSON object's members in document order (a Go map would lose it, and
// struct fields should follow the models' field order).
func orderedObject(data json.RawMessage) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("not an object")
	}
	var out []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, err
		}
		out = append(out, member{key: key, value: value})
	}
	return out, nil
}
