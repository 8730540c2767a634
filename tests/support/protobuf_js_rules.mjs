// How two JavaScript protobuf libraries decode the cases of docs/protocol.md §8
// ("Without a protobuf library"), for tests/unit/test_protobuf_rules.py.
// usage (in a folder with node_modules/protobufjs and @bufbuild/protobuf):
//   node protobuf_js_rules.mjs LIFECYCLE.proto LIFECYCLE.fds CASES.json
// CASES.json: {"name": "hex bytes of a moonpool.v1.Request", ...}; prints JSON
// {library: {name: {"parses": bool, "version", "request_id", "body", ...}}}.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

// The libraries are looked up from the current folder (where `npm install` put them).
const require = createRequire(process.cwd() + "/");
const [protoPath, fdsPath, casesPath] = process.argv.slice(2);
const cases = JSON.parse(readFileSync(casesPath, "utf8"));
const out = {};

function summary(fields) {
  return Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, v === undefined ? null : v]));
}

try {
  const protobuf = require("protobufjs");
  const root = protobuf.loadSync(protoPath);
  const Request = root.lookupType("moonpool.v1.Request");
  out.protobufjs = {};
  for (const [name, hex] of Object.entries(cases)) {
    try {
      const m = Request.decode(Buffer.from(hex, "hex"));
      out.protobufjs[name] = summary({
        parses: true, version: m.protocolVersion, request_id: Number(m.requestId ?? 0),
        body: m.body ?? null, instance: m.instance,
        configure: m.configure ? [m.configure.instanceName, Number(m.configure.seed ?? 0)] : null,
      });
    } catch (e) {
      out.protobufjs[name] = { parses: false, error: String(e.message).slice(0, 80) };
    }
  }
} catch (e) {
  out.protobufjs = { unavailable: String(e.message).slice(0, 120) };
}

try {
  const { createFileRegistry, fromBinary } = require("@bufbuild/protobuf");
  const { FileDescriptorSetSchema } = require("@bufbuild/protobuf/wkt");
  const registry = createFileRegistry(fromBinary(FileDescriptorSetSchema, readFileSync(fdsPath)));
  const Request = registry.getMessage("moonpool.v1.Request");
  out["protobuf-es"] = {};
  for (const [name, hex] of Object.entries(cases)) {
    try {
      const m = fromBinary(Request, Buffer.from(hex, "hex"));
      const body = m.body?.case ?? null;
      const c = body === "configure" ? m.body.value : null;
      out["protobuf-es"][name] = summary({
        parses: true, version: m.protocolVersion, request_id: Number(m.requestId),
        body, instance: m.instance, configure: c ? [c.instanceName, Number(c.seed)] : null,
      });
    } catch (e) {
      out["protobuf-es"][name] = { parses: false, error: String(e.message).slice(0, 80) };
    }
  }
} catch (e) {
  out["protobuf-es"] = { unavailable: String(e.message).slice(0, 120) };
}
console.log(JSON.stringify(out));
