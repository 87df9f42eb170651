/** Form parsing of the HTTP-driven tests (test/support/html-forms.ts). */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { encodeForm, parseForms } from './html-forms.js';

// oidc-provider's OAuth 2.0 Form Post Response Mode page, as v9 renders it.
const FORM_POST_PAGE = `<!DOCTYPE html>
<html>
<head><title>Submitting Callback</title>
  <script>document.addEventListener('DOMContentLoaded', function () { document.forms[0].submit() });</script>
</head>
<body>
  <form method="post" action="http://localhost:8080/auth/callback">
    <input type="hidden" name="code" value="abc-123"/>
<input type="hidden" name="state" value="s&amp;t&#39;a&quot;te"/>
<input type="hidden" name="iss" value="http://127.0.0.1:4000"/>
    <noscript>
      Your browser does not support JavaScript or you've disabled it.<br/>
      <button autofocus type="submit">Continue</button>
    </noscript>
  </form>
</body>
</html>`;

describe('parseForms', () => {
  test('reads the form_post page: POST, absolute action, hidden inputs decoded, no button', () => {
    const [form, ...rest] = parseForms(FORM_POST_PAGE, 'http://127.0.0.1:4000/auth/xyz');
    assert.equal(rest.length, 0);
    assert.equal(form?.method, 'post');
    assert.equal(form?.action, 'http://localhost:8080/auth/callback');
    assert.deepEqual(form?.fields.map((f) => [f.name, f.value]), [['code', 'abc-123'], ['state', `s&t'a"te`], ['iss', 'http://127.0.0.1:4000']]);
    assert.equal(encodeForm(form!), 'code=abc-123&state=s%26t%27a%22te&iss=http%3A%2F%2F127.0.0.1%3A4000');
  });

  test('relative and empty actions resolve against the page; method defaults to get', () => {
    const html = `<form action="/interaction/u1/login" METHOD="POST"></form><form action=""></form><form id='third' action=../up></form>`;
    const forms = parseForms(html, 'http://127.0.0.1:4000/interaction/u1');
    assert.deepEqual(forms.map((f) => [f.id, f.method, f.action]), [
      [undefined, 'post', 'http://127.0.0.1:4000/interaction/u1/login'],
      [undefined, 'get', 'http://127.0.0.1:4000/interaction/u1'],
      ['third', 'get', 'http://127.0.0.1:4000/up'],
    ]);
  });

  test('only successful controls: unchecked boxes, disabled, nameless and submit inputs are left out', () => {
    const html = `<form method="post" action="/x">
      <input id="email" name="email" type="email" value="">
      <input name="remember" type="checkbox">
      <input name="agree" type="checkbox" checked>
      <input name="off" value="1" disabled>
      <input value="nameless">
      <input type="submit" name="go" value="Go">
      <textarea name="note">a &lt;b&gt;</textarea>
    </form>`;
    const [form] = parseForms(html, 'http://h.test/');
    assert.deepEqual(form?.fields.map((f) => [f.name, f.value, f.type]), [
      ['email', '', 'email'],
      ['agree', 'on', 'checkbox'],
      ['note', 'a <b>', 'textarea'],
    ]);
    assert.equal(form?.fields[0]?.id, 'email');
    assert.equal(encodeForm(form!, { email: 'a@b.c' }), 'email=a%40b.c&agree=on&note=a+%3Cb%3E');
  });
});
