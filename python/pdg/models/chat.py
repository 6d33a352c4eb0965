"""Chat templates: the Jinja2 programs checkpoints ship to turn a list of
messages into the text the model was trained on.

They render here as transformers renders them (the environment is the
contract, since templates are written against it): a sandboxed, immutable
environment with trim_blocks and lstrip_blocks, loop controls, a `tojson`
filter that leaves non-ASCII and HTML characters alone, `raise_exception`
and `strftime_now`, and a `{% generation %}` block tag that renders its
body. Messages lose their keys whose value is None, as there. Templates
come from checkpoints, i.e. from strangers: the sandbox keeps them from
reaching into Python.
"""

from __future__ import annotations

import json
from datetime import datetime

from .errors import ModelError


class ChatTemplate:
    def __init__(self, source: str, where: str):
        from .weights import require

        require("jinja2")  # says which extra to install when it is missing
        import jinja2.ext
        import jinja2.sandbox

        self.where = where
        env = jinja2.sandbox.ImmutableSandboxedEnvironment(
            trim_blocks=True,
            lstrip_blocks=True,
            extensions=[_generation_tag(jinja2), jinja2.ext.loopcontrols],
        )
        env.filters["tojson"] = _tojson
        env.globals["raise_exception"] = _raiser(jinja2)
        env.globals["strftime_now"] = lambda fmt: datetime.now().strftime(fmt)
        self._errors = (jinja2.TemplateError,)
        try:
            self.template = env.from_string(source)
        except jinja2.TemplateSyntaxError as e:
            raise ModelError(
                f"{where}: the chat template does not parse: line {e.lineno}: {e}"
            ) from None

    def render(self, messages, add_generation_prompt: bool = False, **variables) -> str:
        if not isinstance(messages, (list, tuple)) or not messages:
            raise ModelError(
                "a chat is a non-empty list of messages ({'role': ..., 'content': ...})"
            )
        chat = []
        for m in messages:
            if not isinstance(m, dict):
                raise ModelError(f"a chat message is a dict, got {type(m).__name__}: {m!r}")
            chat.append({k: v for k, v in m.items() if v is not None})
        try:
            return self.template.render(
                messages=chat,
                add_generation_prompt=add_generation_prompt,
                tools=variables.pop("tools", None),
                documents=variables.pop("documents", None),
                **variables,
            )
        except self._errors as e:
            raise ModelError(f"{self.where}: rendering the chat template failed: {e}") from None


def _tojson(value, ensure_ascii=False, indent=None, separators=None, sort_keys=False) -> str:
    return json.dumps(
        value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys
    )


def _raiser(jinja2):
    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    return raise_exception


def _generation_tag(jinja2):
    """`{% generation %}...{% endgeneration %}` (marks the assistant's part
    for training masks in transformers): here it renders its body."""

    class Generation(jinja2.ext.Extension):
        tags = {"generation"}

        def parse(self, parser):
            lineno = next(parser.stream).lineno
            body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
            return jinja2.nodes.CallBlock(self.call_method("_body"), [], [], body).set_lineno(
                lineno
            )

        def _body(self, caller):
            return caller()

    return Generation
