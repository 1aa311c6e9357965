// Package all registers every policy of dlsched with package policy. Import
// it for its side effect when a program chooses policies by name (from a
// flag or a configuration file) and should offer all of them:
//
//	import _ "github.com/dlsched/dlsched/policy/all"
//
// after which policy.New builds any of them and policy.Registered lists
// them. A program that needs only a few policies imports their packages
// instead, and links nothing else.
package all

import (
	// Every policy package registers its policies in its init function.
	_ "github.com/dlsched/dlsched/policy/allox"
	_ "github.com/dlsched/dlsched/policy/baseline"
	_ "github.com/dlsched/dlsched/policy/gandiva"
	_ "github.com/dlsched/dlsched/policy/gavel"
	_ "github.com/dlsched/dlsched/policy/pollux"
	_ "github.com/dlsched/dlsched/policy/shockwave"
	_ "github.com/dlsched/dlsched/policy/synergy"
	_ "github.com/dlsched/dlsched/policy/themis"
	_ "github.com/dlsched/dlsched/policy/tiresias"
)
