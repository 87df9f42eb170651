import { sendJson } from '../../shared/http/http-response.js';
import type { Handler } from '../http/request-context.js';
import type { ConsolePageRender } from '../routes/console-routes.js';
import type { AcmeCertificates } from './acme-certificates.js';
import { certificatesPage } from './certificates-page.js';

/** The certificates' endpoint and console page (design.md §4.15); guards are wired in routes/route-table.ts. */
export interface CertificateHandlers {
  /** `GET /api/certificates` → 200, every host's status (certificate-status.ts) by host (`[]` while ACME is off). */
  list: Handler;
  /** The console's Certificates page. */
  console: ConsolePageRender;
}

export function createCertificateHandlers(deps: { certificates: AcmeCertificates | undefined }): CertificateHandlers {
  const { certificates } = deps;
  return {
    list: ({ res }) => sendJson(res, 200, certificates?.list() ?? []),
    console: (_ctx, view) => ({ html: certificatesPage(view, certificates?.list() ?? [], certificates !== undefined) }),
  };
}
