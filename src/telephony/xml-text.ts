/** Text for an XML attribute value or element content (carriers' call-control documents). */
export function escapeXml(text: string): string {
  return text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&apos;");
}

export const XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>';
