// A portal client over node:http for the tests: raw paths and headers as sent (fetch would
// refuse some), the sign-in form's CSRF cookie and token, the page's alert text.
import { request as httpRequest } from 'node:http';

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request; `from` picks the loopback source address (127.0.0.x all reach 127.0.0.1), `agent: false` a fresh connection. */
export function send(origin: string, method: string, path: string, options: { from?: string; agent?: false; cookie?: string; form?: Record<string, string> | URLSearchParams; headers?: Record<string, string> } = {}): Promise<Reply> {
  const body = options.form === undefined ? undefined : new URLSearchParams(options.form).toString();
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${origin}${path}`,
      {
        method,
        ...(options.from ? { localAddress: options.from } : {}),
        ...(options.agent === false ? { agent: false } : {}),
        headers: {
          ...(options.cookie ? { cookie: options.cookie } : {}),
          ...(body === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded', 'content-length': String(Buffer.byteLength(body)) }),
          ...options.headers,
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

export const csrfOf = (reply: Reply): string => /name="csrf" value="([^"]+)"/.exec(reply.body)?.[1] as string;
export const cookieOf = (reply: Reply, name: string): string | undefined => [reply.headers['set-cookie'] ?? []].flat().map((line) => line.split(';')[0] as string).find((pair) => pair.startsWith(`${name}=`));
export const alertOf = (reply: Reply): string => (/role="alert"[^>]*>([\s\S]*?)<\//.exec(reply.body)?.[1] ?? '').replace(/\s+/g, ' ').trim();

/** A sign-in form ready to post: its CSRF cookie and token. */
export async function signInForm(origin: string, headers?: Record<string, string>): Promise<{ cookie: string; csrf: string }> {
  const form = await send(origin, 'GET', '/portal/sign-in', headers ? { headers } : {});
  return { cookie: cookieOf(form, 'crosstab_portal_signin') as string, csrf: csrfOf(form) };
}

/** Posts a sign-in form fetched before (so that many can be sent at once). */
export function postSignIn(origin: string, form: { cookie: string; csrf: string }, email: string, password: string, headers?: Record<string, string>): Promise<Reply> {
  return send(origin, 'POST', '/portal/sign-in', { cookie: form.cookie, form: { csrf: form.csrf, email, password }, ...(headers ? { headers } : {}) });
}
