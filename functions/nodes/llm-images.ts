import { extname } from 'node:path';
import type { LlmImage, LlmImageMediaType } from '../core/index.ts';
import { WorkspacePathError } from './workspace.ts';
import { readWorkspaceFile } from './workspace-files.ts';

/* pflow's `images` (declared in llm-spec.ts): URLs (http, https, data:) or files in the workspace, sent to the model as image blocks. */

const MEDIA_TYPES: Readonly<Record<string, LlmImageMediaType>> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
};

/** Largest image file read (the Messages API refuses larger ones anyway). */
const MAX_IMAGE_BYTES = 5 * 1024 * 1024;

/** An image the node cannot send: the workflow's to fix. */
export class ImageError extends Error {}

const DATA_URL = /^data:(image\/(?:png|jpeg|gif|webp));base64,(.+)$/s;

export const toImageBlock = async (image: string, workspace: string | undefined): Promise<LlmImage> => {
  if (/^https?:\/\//i.test(image)) return { type: 'image', source: { type: 'url', url: image } };
  const data = DATA_URL.exec(image);
  if (data) return { type: 'image', source: { type: 'base64', media_type: data[1] as LlmImageMediaType, data: data[2] as string } };
  const mediaType = MEDIA_TYPES[extname(image).toLowerCase()];
  if (mediaType === undefined) throw new ImageError(`image '${image}': use an http(s) URL, a data: URL, or a .png, .jpg, .gif or .webp file`);
  if (workspace === undefined) throw new ImageError(`image '${image}': files are read from the workspace, which only the local host has; on AWS give a URL`);
  let file: { size: number; data?: Buffer };
  try {
    file = await readWorkspaceFile(workspace, image, MAX_IMAGE_BYTES);
  } catch (error) {
    if (error instanceof WorkspacePathError && error.code === 'FILE_NOT_FOUND') throw new ImageError(`image '${image}': no such file in the workspace`);
    if (error instanceof WorkspacePathError) throw new ImageError(`image '${image}': ${error.message}`);
    throw error;
  }
  if (file.data === undefined) throw new ImageError(`image '${image}' is ${file.size} bytes; the limit is ${MAX_IMAGE_BYTES}`);
  return { type: 'image', source: { type: 'base64', media_type: mediaType, data: file.data.toString('base64') } };
};
