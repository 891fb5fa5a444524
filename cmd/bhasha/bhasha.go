// Command bhasha runs cross-lingual knowledge-consistency evaluations
// against vLLM (OpenAI-compatible) endpoints with the built-in studies,
// and serves a simulated vLLM-compatible server for users without a GPU;
// `bhasha help` lists its subcommands, and package
// github.com/bhashalab/bhasha/cmd/cli documents them. A study of one's own
// gets the same command from a main package like this one, naming it:
// cli.Main(mystudy.Study{}).
package main

import "github.com/bhashalab/bhasha/cmd/cli"

func main() { cli.Main() }
