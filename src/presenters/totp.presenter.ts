/**
 * What the "Set up authenticator app" page shows of an enrolment: the otpauth URI as a QR code
 * (an SVG data: URL, which the hosted pages' CSP allows as an image; no script) and the secret
 * as the "Setup key" in groups of four.
 */
export async function presentTotpSetup(enrolment: {
  secret: string;
  uri: string;
}): Promise<{ qrDataUrl: string; setupKey: string }> {
  const QRCode = await import('qrcode'); // at the first enrolment, not at every start
  const svg = await QRCode.toString(enrolment.uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
  return {
    qrDataUrl: `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`,
    setupKey: enrolment.secret.replace(/(.{4})(?=.)/g, '$1 '),
  };
}
