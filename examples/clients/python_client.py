"""toolgate from Python, standard library only.

    TOOLGATE_URL=http://localhost:8080 TOOLGATE_API_KEY=... python3 examples/clients/python_client.py
"""
import json
import os
import sys
import urllib.error
import urllib.request

BASE = os.environ.get("TOOLGATE_URL", "http://localhost:8080")
KEY = os.environ.get("TOOLGATE_API_KEY")
if not KEY:
    sys.exit("set TOOLGATE_API_KEY to an API key (npm start prints the demo one), e.g. export TOOLGATE_API_KEY=tg_demo_…")


def call(method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(
        BASE + path,
        data=data,
        method=method,
        headers={"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:  # 4xx/5xx still carry a JSON body
        return error.code, json.loads(error.read())


# 1. The tools the model may see, in OpenAI's shape (pass them as `tools=` to a chat completion).
status, tools = call("GET", "/v1/tools?format=openai")
print("tools:", [tool["function"]["name"] for tool in tools])

# 2. Run the tool calls the model produced; every result is one string for the model.
status, result = call("POST", "/v1/execute", {"name": "get_weather", "arguments": '{"city": "Paris"}', "callId": "call_1"})
print("result:", result["ok"], result["output"])

# 3. A failure is a result too: give `output` back to the model, it explains the problem.
status, failed = call("POST", "/v1/execute", {"name": "get_weather", "arguments": {"town": "Paris"}})
print("error:", failed["error"]["errorType"], failed["output"])
