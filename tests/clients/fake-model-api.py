#!/usr/bin/env python3
"""A model API of the tests' own, over TLS on host loopback, for real agents
run inside `agentrun sandbox` (tests/agents.bats).

  fake-model-api.py --cert CERT --key KEY --port-file FILE --log FILE --command CMD

It speaks just enough of three APIs, streamed (SSE) or not:
  POST /v1/messages   (Anthropic Messages: Claude Code, OpenCode)
  POST /v1/responses  (OpenAI Responses: Codex)
  POST /v1beta/models/MODEL:generateContent, :streamGenerateContent (Gemini CLI)
The first turn of a conversation answers with one tool call that runs CMD in
a shell (the agent's Bash, bash, shell or run_shell_command tool, whichever
the request offers); once the request carries that tool's result, the answer
is a text that quotes it, so the test reads what the tool could do in the
agent's final output. Every
request is one JSON line in the log (path, model, tools offered, tool result
seen). Anything else gets a small valid answer so that start-up chatter
(token counts, titles) does not fail.
"""
import argparse
import json
import ssl
import sys
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ARGS = None
LOG_LOCK = threading.Lock()


def log(entry):
    with LOG_LOCK, open(ARGS.log, "a") as f:
        f.write(json.dumps(entry) + "\n")


def text_of(content):
    """The text inside a tool result, whatever shape it came in."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(text_of(c.get("text", c.get("content", ""))) if isinstance(c, dict) else str(c)
                       for c in content)
    if isinstance(content, dict):
        return text_of(content.get("text", content.get("content", "")))
    return str(content)


# ---- Anthropic Messages ----

def anthropic_tool_result(body):
    for m in reversed(body.get("messages", [])):
        if m.get("role") != "user" or not isinstance(m.get("content"), list):
            continue
        for c in m["content"]:
            if c.get("type") == "tool_result":
                return text_of(c.get("content", ""))
        return None
    return None


def anthropic_reply(body):
    tools = [t.get("name") for t in body.get("tools", []) if isinstance(t, dict)]
    result = anthropic_tool_result(body)
    model = body.get("model", "claude-fake")
    if result is not None:
        return tools, result, [{"type": "text", "text": "TOOL-RESULT-BEGIN\n" + result + "\nTOOL-RESULT-END"}], "end_turn"
    # Claude Code calls its shell tool Bash, OpenCode bash
    bash = next((t for t in tools if isinstance(t, str) and t.lower() == "bash"), None)
    if bash:
        return tools, None, [{"type": "tool_use", "id": "toolu_" + uuid.uuid4().hex[:20], "name": bash,
                              "input": {"command": ARGS.command, "description": "run the test's command"}}], "tool_use"
    return tools, None, [{"type": "text", "text": "ok"}], "end_turn"


def sse(handler, events):
    handler.send_response(200)
    handler.send_header("Content-Type", "text/event-stream")
    handler.send_header("Cache-Control", "no-cache")
    handler.end_headers()
    for name, data in events:
        chunk = ("event: %s\ndata: %s\n\n" % (name, json.dumps(data))).encode()
        handler.wfile.write(chunk)
    handler.wfile.flush()
    handler.close_connection = True


def anthropic(handler, body):
    tools, result, content, stop = anthropic_reply(body)
    log({"api": "anthropic", "path": handler.path, "model": body.get("model"), "tools": tools,
         "tool_result": result, "stream": bool(body.get("stream"))})
    mid = "msg_" + uuid.uuid4().hex[:20]
    usage = {"input_tokens": 10, "output_tokens": 10}
    msg = {"id": mid, "type": "message", "role": "assistant", "model": body.get("model", "claude-fake"),
           "content": content, "stop_reason": stop, "stop_sequence": None, "usage": usage}
    if not body.get("stream"):
        return json_reply(handler, msg)
    start = dict(msg, content=[], stop_reason=None)
    events = [("message_start", {"type": "message_start", "message": start})]
    for i, c in enumerate(content):
        if c["type"] == "text":
            events.append(("content_block_start", {"type": "content_block_start", "index": i,
                                                   "content_block": {"type": "text", "text": ""}}))
            events.append(("content_block_delta", {"type": "content_block_delta", "index": i,
                                                   "delta": {"type": "text_delta", "text": c["text"]}}))
        else:
            events.append(("content_block_start", {"type": "content_block_start", "index": i,
                                                   "content_block": dict(c, input={})}))
            events.append(("content_block_delta", {"type": "content_block_delta", "index": i,
                                                   "delta": {"type": "input_json_delta",
                                                             "partial_json": json.dumps(c["input"])}}))
        events.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
    events.append(("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                     "usage": {"output_tokens": 10}}))
    events.append(("message_stop", {"type": "message_stop"}))
    sse(handler, events)


# ---- OpenAI Responses ----

SHELL_TOOLS = ("shell", "shell_command", "exec_command", "local_shell", "container.exec")


def responses_tool_result(body):
    items = body.get("input", [])
    if not isinstance(items, list):
        return None
    for it in reversed(items):
        if isinstance(it, dict) and it.get("type") in ("function_call_output", "local_shell_call_output",
                                                       "custom_tool_call_output"):
            out = it.get("output", "")
            if isinstance(out, str):
                try:
                    out = json.loads(out).get("output", out)
                except (ValueError, AttributeError):
                    pass
            return text_of(out)
        if isinstance(it, dict) and it.get("role") == "user":
            return None
    return None


def responses_call(tools):
    """A call of the first shell-like tool offered, with its argument shape."""
    for t in tools:
        name = t.get("name") or t.get("type")
        if name not in SHELL_TOOLS:
            continue
        props = ((t.get("parameters") or {}).get("properties") or {})
        cmd = props.get("command", {})
        if cmd.get("type") == "array":
            args = {"command": ["bash", "-lc", ARGS.command]}
        elif "cmd" in props:
            args = {"cmd": ARGS.command}
        else:
            args = {"command": ARGS.command}
        return {"type": "function_call", "id": "fc_" + uuid.uuid4().hex[:20], "call_id": "call_" + uuid.uuid4().hex[:20],
                "name": name, "arguments": json.dumps(args), "status": "completed"}
    return None


def responses(handler, body):
    tools = [t for t in body.get("tools", []) if isinstance(t, dict)]
    result = responses_tool_result(body)
    call = None if result is not None else responses_call(tools)
    log({"api": "openai", "path": handler.path, "model": body.get("model"),
         "tools": [t.get("name") or t.get("type") for t in tools], "tool_result": result,
         "stream": bool(body.get("stream"))})
    if call:
        item = call
    else:
        text = "ok" if result is None else "TOOL-RESULT-BEGIN\n" + result + "\nTOOL-RESULT-END"
        item = {"type": "message", "id": "msg_" + uuid.uuid4().hex[:20], "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}]}
    rid = "resp_" + uuid.uuid4().hex[:20]
    usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 10,
             "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 20}
    resp = {"id": rid, "object": "response", "status": "completed", "model": body.get("model", "gpt-fake"),
            "output": [item], "usage": usage}
    if not body.get("stream"):
        return json_reply(handler, resp)
    events = [("response.created", {"type": "response.created", "response": dict(resp, status="in_progress", output=[])}),
              ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0, "item": item})]
    if item["type"] == "message":
        events.append(("response.output_text.delta", {"type": "response.output_text.delta", "output_index": 0,
                                                      "content_index": 0, "item_id": item["id"],
                                                      "delta": item["content"][0]["text"]}))
    events.append(("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}))
    events.append(("response.completed", {"type": "response.completed", "response": resp}))
    sse(handler, events)


# ---- Gemini generateContent ----

GEMINI_SHELL = ("run_shell_command",)


def gemini_tool_result(body):
    contents = body.get("contents", [])
    for c in reversed(contents if isinstance(contents, list) else []):
        if not isinstance(c, dict) or c.get("role") != "user":
            continue
        for part in c.get("parts", []):
            fr = part.get("functionResponse") if isinstance(part, dict) else None
            if fr is not None:
                r = fr.get("response", {})
                out = r.get("output") if isinstance(r, dict) else None
                return out if isinstance(out, str) else json.dumps(r)
        return None
    return None


def from_schema(schema):
    """The smallest value a JSON schema accepts: what a JSON-mode side call
    (Gemini CLI's model router) parses without retrying."""
    if not isinstance(schema, dict):
        return None
    if schema.get("enum"):
        return schema["enum"][0]
    t = str(schema.get("type", "object")).lower()
    if t == "object":
        props = schema.get("properties") or {}
        return {k: from_schema(props.get(k, {})) for k in schema.get("required", list(props))}
    if t == "array":
        return []
    if t in ("integer", "number"):
        return schema.get("minimum", 1)
    if t == "boolean":
        return False
    return "ok"


def gemini(handler, body, model, stream):
    decls = [d for t in body.get("tools", []) if isinstance(t, dict)
             for d in t.get("functionDeclarations", []) if isinstance(d, dict)]
    names = [d.get("name") for d in decls]
    result = gemini_tool_result(body)
    log({"api": "gemini", "path": handler.path, "model": model, "tools": names, "tool_result": result,
         "stream": stream})
    shell = next((n for n in names if n in GEMINI_SHELL), None)
    if result is not None:
        parts = [{"text": "TOOL-RESULT-BEGIN\n" + result + "\nTOOL-RESULT-END"}]
    elif shell:
        parts = [{"functionCall": {"name": shell, "args": {"command": ARGS.command,
                                                           "description": "run the test's command"}}}]
    else:
        gc = body.get("generationConfig") or {}
        schema = gc.get("responseJsonSchema") or gc.get("responseSchema")
        parts = [{"text": json.dumps(from_schema(schema)) if schema else "ok"}]
    resp = {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 10, "totalTokenCount": 20},
            "modelVersion": model}
    if not stream:
        return json_reply(handler, resp)
    handler.send_response(200)
    handler.send_header("Content-Type", "text/event-stream")
    handler.end_headers()
    handler.wfile.write(("data: %s\r\n\r\n" % json.dumps(resp)).encode())
    handler.wfile.flush()
    handler.close_connection = True


def json_reply(handler, obj, code=200):
    data = json.dumps(obj).encode()
    handler.send_response(code)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_GET(self):
        log({"api": "get", "path": self.path})
        if self.path.split("?")[0].endswith("/models"):
            return json_reply(self, {"object": "list", "data": [], "models": []})
        json_reply(self, {})

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        path = self.path.split("?")[0]
        if path.endswith("/messages/count_tokens"):
            log({"api": "anthropic", "path": self.path})
            return json_reply(self, {"input_tokens": 10})
        if path.endswith("/messages"):
            return anthropic(self, body)
        if path.endswith("/responses"):
            return responses(self, body)
        # /v1beta/models/MODEL:ACTION
        if "/models/" in path and ":" in path.rsplit("/", 1)[-1]:
            model, action = path.rsplit("/", 1)[-1].split(":", 1)
            if action == "countTokens":
                log({"api": "gemini", "path": self.path})
                return json_reply(self, {"totalTokens": 10})
            if action in ("generateContent", "streamGenerateContent"):
                return gemini(self, body, model, action == "streamGenerateContent")
        log({"api": "other", "path": self.path})
        json_reply(self, {})


def main():
    global ARGS
    p = argparse.ArgumentParser()
    p.add_argument("--cert", required=True)
    p.add_argument("--key", required=True)
    p.add_argument("--port-file", required=True)
    p.add_argument("--log", required=True)
    p.add_argument("--command", required=True)
    ARGS = p.parse_args()
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(ARGS.cert, ARGS.key)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    with open(ARGS.port_file + ".tmp", "w") as f:
        f.write(str(srv.server_address[1]))
    import os
    os.rename(ARGS.port_file + ".tmp", ARGS.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
