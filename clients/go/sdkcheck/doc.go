// Package sdkcheck holds only tests: the Go client's generic wrappers against the SDKs' own
// message types (github.com/anthropics/anthropic-sdk-go, github.com/openai/openai-go). It is a
// module of its own so that those SDKs stay test dependencies here and never become
// requirements of the client module, which needs the standard library only.
package sdkcheck
