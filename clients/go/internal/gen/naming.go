package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"unicode"
)

// initialisms are written in capitals, as Go names do (golint's list, plus SHA256).
var initialisms = map[string]bool{
	"ACL": true, "API": true, "ASCII": true, "CPU": true, "CSS": true, "DNS": true, "EOF": true,
	"GUID": true, "HTML": true, "HTTP": true, "HTTPS": true, "ID": true, "IP": true, "JSON": true,
	"RPC": true, "SHA256": true, "SQL": true, "SSH": true, "TCP": true, "TLS": true, "TTL": true,
	"UDP": true, "UI": true, "UID": true, "UUID": true, "URI": true, "URL": true, "UTF8": true,
	"XML": true,
}

// exported turns a wire name (snake_case, namespace/verb, rpc.discover, $/cancelRequest,
// Pydantic's Model-Input) into an exported Go identifier.
func exported(name string) string {
	var b strings.Builder
	for _, part := range words(name) {
		if upper := strings.ToUpper(part); initialisms[upper] {
			b.WriteString(upper)
			continue
		}
		if upper := strings.ToUpper(strings.TrimSuffix(part, "s")); len(part) > 2 && strings.HasSuffix(part, "s") && initialisms[upper] {
			b.WriteString(upper + "s") // ids -> IDs, urls -> URLs
			continue
		}
		runes := []rune(part)
		runes[0] = unicode.ToUpper(runes[0])
		b.WriteString(string(runes))
	}
	out := b.String()
	if out == "" || unicode.IsDigit([]rune(out)[0]) {
		out = "X" + out // a Go identifier cannot start with a digit
	}
	return out
}

// words splits at every non-alphanumeric character and at camel-case boundaries
// (JsonValue -> Json Value, HTTPServer -> HTTP Server), so that initialisms can be recognised.
func words(name string) []string {
	var out []string
	for _, field := range strings.FieldsFunc(name, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		runes := []rune(field)
		start := 0
		for i := 1; i < len(runes); i++ {
			lowerToUpper := unicode.IsLower(runes[i-1]) && unicode.IsUpper(runes[i])
			endOfCaps := i+1 < len(runes) && unicode.IsUpper(runes[i-1]) && unicode.IsUpper(runes[i]) && unicode.IsLower(runes[i+1])
			if lowerToUpper || endOfCaps {
				out = append(out, string(runes[start:i]))
				start = i
			}
		}
		out = append(out, string(runes[start:]))
	}
	return out
}

// handWritten returns the package-level names and the Client methods declared by the package's
// own (not generated) files, so that generated names can be checked against them.
func handWritten(dir string, generated map[string]bool) (names, clientMethods map[string]bool, err error) {
	names, clientMethods = map[string]bool{}, map[string]bool{}
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, nil, err
	}
	fset := token.NewFileSet()
	for _, path := range files {
		if generated[filepath.Base(path)] {
			continue
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return nil, nil, err
		}
		file, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
		if err != nil {
			return nil, nil, err
		}
		if strings.HasSuffix(file.Name.Name, "_test") {
			continue // an external test package has a namespace of its own
		}
		for _, decl := range file.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					names[d.Name.Name] = true
				} else if receiverIs(d.Recv, "Client") {
					clientMethods[d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch s := spec.(type) {
					case *ast.TypeSpec:
						names[s.Name.Name] = true
					case *ast.ValueSpec:
						for _, n := range s.Names {
							names[n.Name] = true
						}
					}
				}
			}
		}
	}
	return names, clientMethods, nil
}

func receiverIs(recv *ast.FieldList, typeName string) bool {
	if len(recv.List) != 1 {
		return false
	}
	expr := recv.List[0].Type
	if star, ok := expr.(*ast.StarExpr); ok {
		expr = star.X
	}
	ident, ok := expr.(*ast.Ident)
	return ok && ident.Name == typeName
}
