//go:build clp && !cgo

package lp

// The clp build tag asks for the CLP engine, which is C++ reached through
// cgo. A build with the tag but without cgo (CGO_ENABLED=0, or a machine
// where the go command finds no C compiler and turns cgo off) stops here,
// at compile time, instead of quietly shipping the pure-Go engine that the
// tag was meant to replace. The compiler's message is the name below:
// "undefined: clp_build_tag_needs_cgo__set_CGO_ENABLED_1_or_drop_tags_clp".
var _ = clp_build_tag_needs_cgo__set_CGO_ENABLED_1_or_drop_tags_clp
