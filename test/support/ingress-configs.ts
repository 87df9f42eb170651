/**
 * The ingress configurations of README "Behind an existing ingress", as the tests run them: each
 * sends the gateway's own paths (`/auth/`, `/.gatehouse/`) to the gateway, asks `/auth/verify`
 * about every other request, redirects a 401 to its `Location` (the sign-in), passes the identity
 * fields of a 200 to the upstream (and never a client's own copies), and refuses the rest.
 */

/** Where an ingress listens and what it stands in front of (`host:port` addresses). */
export interface IngressSite {
  /** Its own port on 127.0.0.1 (PUBLIC_URL's). */
  readonly port: number;
  /** The gateway's public listener, `127.0.0.1:<port>`. */
  readonly gateway: string;
  /** The application, `127.0.0.1:<port>`. */
  readonly upstream: string;
}

/** The identity fields the gateway answers a 200 with (request-headers.ts `pushIdentityFields`). */
export const IDENTITY_FIELDS = ['X-Forwarded-User', 'X-Forwarded-Email', 'X-Gatehouse-Assertion'] as const;

/**
 * nginx: `auth_request` to an internal location that proxies to `/auth/verify` with
 * `proxy_method GET`, no body, and the original request in `X-Original-URI` (`$request_uri`, raw,
 * as `proxy_pass` without a URI forwards it) and `X-Original-Method`; `auth_request_set` keeps the
 * answer's fields, `error_page 401 =302` sends the browser to its `Location`. `runsAsRoot`: the
 * workers then stay root, to write their temporary files in `dir`.
 */
export function nginxConfig(site: IngressSite, dir: string, runsAsRoot: boolean): string {
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((kind) => `  ${kind}_temp_path ${dir}/${kind};`).join('\n');
  return `${runsAsRoot ? 'user root;\n' : ''}worker_processes 1;
pid ${dir}/nginx.pid;
error_log stderr warn;
events { worker_connections 256; }
http {
  access_log off;
${temp}
  # kept-alive connections: without them every request opens one to each
  upstream gatehouse { server ${site.gateway}; keepalive 32; }
  upstream application { server ${site.upstream}; keepalive 32; }
  proxy_http_version 1.1;

  server {
    listen 127.0.0.1:${site.port};

    # the gateway's sign-in (and its host sign-in paths)
    location /auth/ { proxy_pass http://gatehouse; proxy_set_header Host $http_host; proxy_set_header X-Forwarded-For $remote_addr; proxy_set_header Connection ""; }
    location /.gatehouse/ { proxy_pass http://gatehouse; proxy_set_header Host $http_host; proxy_set_header X-Forwarded-For $remote_addr; proxy_set_header Connection ""; }

    location = /_gatehouse_verify {
      internal;
      proxy_pass http://gatehouse/auth/verify;
      proxy_method GET;
      proxy_pass_request_body off;
      proxy_set_header Content-Length "";
      proxy_set_header X-Original-URI $request_uri;
      proxy_set_header X-Original-Method $request_method;
      proxy_set_header X-Forwarded-Host $http_host;
      proxy_set_header X-Forwarded-Proto $scheme;
      proxy_set_header X-Forwarded-For $remote_addr;
      proxy_set_header Connection "";
    }

    location / {
      auth_request /_gatehouse_verify;
      auth_request_set $gatehouse_user $upstream_http_x_forwarded_user;
      auth_request_set $gatehouse_email $upstream_http_x_forwarded_email;
      auth_request_set $gatehouse_assertion $upstream_http_x_gatehouse_assertion;
      auth_request_set $gatehouse_sign_in $upstream_http_location;
      error_page 401 =302 $gatehouse_sign_in;
      # set (or, empty, removed): a client's own copies never reach the application
      proxy_set_header X-Forwarded-User $gatehouse_user;
      proxy_set_header X-Forwarded-Email $gatehouse_email;
      proxy_set_header X-Gatehouse-Assertion $gatehouse_assertion;
      proxy_set_header Connection "";
      proxy_pass http://application;
    }
  }
}
`;
}

/**
 * Caddy: `forward_auth` (which asks with GET and `X-Forwarded-Method`/`-Uri`/`-Host`), its 401
 * redirected to the answer's `Location`; in a `route`, so the client's identity fields are removed
 * before `copy_headers` sets the gateway's. Caddy before 2.7 (Debian's 2.6) copies a field the
 * answer lacks as its unreplaced placeholder text (`{http.reverse_proxy.header.X-Forwarded-User}`
 * for an anonymous caller of a public service), which the last lines remove.
 */
export function caddyConfig(site: IngressSite, dir: string): string {
  const removed = IDENTITY_FIELDS.map((name) => `    request_header -${name}`).join('\n');
  const unreplaced = IDENTITY_FIELDS.map((name, i) => `    @unreplaced${i} header_regexp ${name} ^\\x7Bhttp\\.reverse_proxy\\.\n    request_header @unreplaced${i} -${name}`).join('\n');
  return `{
  admin off
  auto_https off
  storage file_system ${dir}/data
}

http://127.0.0.1:${site.port} {
  bind 127.0.0.1
  @gatehouse path /auth/* /.gatehouse/*
  handle @gatehouse {
    reverse_proxy ${site.gateway}
  }
  route {
${removed}
    forward_auth ${site.gateway} {
      uri /auth/verify
      copy_headers ${IDENTITY_FIELDS.join(' ')}
      @sign_in status 401
      handle_response @sign_in {
        redir {http.reverse_proxy.header.Location} 302
      }
    }
${unreplaced}
    reverse_proxy ${site.upstream}
  }
}
`;
}

/**
 * HAProxy: the gateway's paths to its backend; every other request goes through the Lua action
 * (see {@link haproxyLua}), then a 401 is redirected, a 403 refused, anything but 200 a 500, and
 * the identity fields of a 200 set after the client's are removed.
 */
export function haproxyConfig(site: IngressSite, dir: string): string {
  const identity = IDENTITY_FIELDS.map((name) => `  http-request del-header ${name}`).join('\n');
  const set = IDENTITY_FIELDS.map((name) => {
    const variable = `txn.gatehouse_${name.toLowerCase().replace(/-/g, '_')}`;
    return `  http-request set-header ${name} %[var(${variable})] if { var(${variable}) -m found }`;
  }).join('\n');
  return `global
  lua-load ${dir}/gatehouse-verify.lua

defaults
  mode http
  timeout connect 5s
  timeout client 30s
  timeout server 30s

frontend web
  bind 127.0.0.1:${site.port}
  acl gatehouse_path path_beg /auth/ /.gatehouse/
  use_backend gatehouse if gatehouse_path
${identity}
  http-request lua.gatehouse_verify http://${site.gateway}/auth/verify if !gatehouse_path
  http-request redirect location %[var(txn.gatehouse_location)] code 302 if !gatehouse_path { var(txn.gatehouse_status) -m int 401 }
  http-request deny deny_status 403 if !gatehouse_path { var(txn.gatehouse_status) -m int 403 }
  http-request deny deny_status 500 if !gatehouse_path !{ var(txn.gatehouse_status) -m int 200 }
${set}
  default_backend application

backend gatehouse
  server gateway ${site.gateway}

backend application
  server application ${site.upstream}
`;
}

/**
 * The Lua action (HAProxy ≥ 2.5, `core.httpclient`): asks the verify URL about the request
 * (`X-Forwarded-Method`, `X-Forwarded-Uri` the raw path and query, `X-Forwarded-Host`, and the
 * client's credentials and `Accept`), and keeps the status, `Location` and identity fields in
 * transaction variables.
 */
export function haproxyLua(): string {
  return `-- Gatehouse as the auth decision (README "Behind an existing ingress")
local passed = { "cookie", "authorization", "accept", "origin", "access-control-request-method" }
local kept = { location = "txn.gatehouse_location", ["x-forwarded-user"] = "txn.gatehouse_x_forwarded_user",
  ["x-forwarded-email"] = "txn.gatehouse_x_forwarded_email", ["x-gatehouse-assertion"] = "txn.gatehouse_x_gatehouse_assertion" }

core.register_action("gatehouse_verify", { "http-req" }, function(txn, url)
  local headers = {
    ["x-forwarded-method"] = { txn.sf:method() },
    ["x-forwarded-uri"] = { txn.sf:pathq() },
    ["x-forwarded-host"] = { txn.sf:req_fhdr("host") or "" },
    ["x-forwarded-proto"] = { "http" },
    ["x-forwarded-for"] = { txn.sf:src() },
  }
  local request = txn.http:req_get_headers()
  for _, name in ipairs(passed) do
    local values = request[name]
    if values ~= nil then
      local list = {}
      for i = 0, #values do if values[i] ~= nil then list[#list + 1] = values[i] end end
      headers[name] = list
    end
  end
  local response = core.httpclient():get({ url = url, headers = headers, timeout = 5000 })
  txn:set_var("txn.gatehouse_status", response.status or 500)
  for name, values in pairs(response.headers or {}) do
    local variable = kept[string.lower(name)]
    if variable ~= nil then
      local first = values[0] or values[1]
      if first ~= nil then txn:set_var(variable, first) end
    end
  end
end, 1)
`;
}
