#!/usr/bin/env node
// brain-tools: takes a package of tool declarations through publishing.
//
//   brain-tools build [dir]    builds the components listed in package.json "brainTools.components"
//   brain-tools check [dir]    checks what npm pack would ship: tools declare, components packed and admissible
//   brain-tools pack  [dir] [--pack-destination <dir>]   build, check, then npm pack
//
// Exit codes: 0 done, 1 a check failed or a component did not build, 2 usage or configuration.
import { resolve } from "node:path";
import { BuildError, buildComponents } from "./build.js";
import { checkPackage } from "./check.js";
import { pack } from "./npm.js";
import { readToolPackage, UsageError } from "./package-config.js";

const USAGE = `usage: brain-tools <build|check|pack> [package-dir] [--pack-destination <dir>]

  build   build the components listed in package.json "brainTools.components" with componentize-js,
          against @aexhq/brain/contracts/tool.wit (brain:tool@0.2.0)
  check   load the package's entry and check every exported tool: schemas representable, each
          component file inside the files npm pack includes and exporting brain:tool's run
  pack    build, check, then npm pack; prints the tarball's path

Exit codes: 0 done, 1 a check failed or a component did not build, 2 usage or configuration.`;

interface Args {
  command: string;
  dir: string;
  destination: string | undefined;
}

function parseArgs(argv: string[]): Args {
  const positional: string[] = [];
  let destination: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === "--pack-destination") {
      destination = argv[++i];
      if (destination === undefined) throw new UsageError("--pack-destination needs a directory");
    } else if (arg.startsWith("-")) {
      throw new UsageError(`unknown option ${arg}`);
    } else {
      positional.push(arg);
    }
  }
  const [command, dir = ".", ...rest] = positional;
  if (!command || !["build", "check", "pack"].includes(command) || rest.length > 0) throw new UsageError(USAGE);
  if (destination !== undefined && command !== "pack") throw new UsageError("--pack-destination is for pack");
  return { command, dir: resolve(dir), destination: destination && resolve(destination) };
}

async function check(args: Args): Promise<boolean> {
  const pkg = readToolPackage(args.dir);
  const { passed, problems } = await checkPackage(pkg);
  for (const line of passed) console.log(`ok  ${line}`);
  if (problems.length === 0) {
    console.log(`${pkg.name}: ${passed.length} tool(s) ready to publish`);
    return true;
  }
  console.error(`brain-tools check: ${pkg.name} is not ready to publish (${problems.length} problem(s)):`);
  for (const problem of problems) console.error(`  - ${problem}`);
  return false;
}

async function main(argv: string[]): Promise<number> {
  if (argv.includes("--help") || argv.includes("-h")) {
    console.log(USAGE);
    return 0;
  }
  const args = parseArgs(argv);
  const log = (line: string) => console.log(line);
  if (args.command === "build") {
    await buildComponents(readToolPackage(args.dir), log);
    return 0;
  }
  if (args.command === "check") return (await check(args)) ? 0 : 1;
  await buildComponents(readToolPackage(args.dir), log);
  if (!(await check(args))) return 1;
  const tarball = await pack(args.dir, args.destination);
  console.log(resolve(args.destination ?? args.dir, tarball));
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof UsageError) {
      console.error(`brain-tools: ${error.message}`);
      process.exitCode = 2;
    } else {
      console.error(
        `brain-tools: ${error instanceof BuildError ? error.message : String((error as Error).stack ?? error)}`,
      );
      process.exitCode = 1;
    }
  },
);
