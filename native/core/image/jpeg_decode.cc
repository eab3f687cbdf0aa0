#include "jpeg_decode.h"

#include <csetjmp>
#include <cstdio>

#include <jpeglib.h>
#include <jerror.h>

#include "orient.h"

namespace sightflow::image {
namespace {

// A progressive file may declare any number of scans, each a full pass over the coefficients: bound them
// as libjpeg-turbo's own TurboJPEG API does when asked to.
constexpr int kMaxScans = 500;

struct ErrorState {
  jpeg_error_mgr mgr;
  jpeg_progress_mgr progress;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

[[noreturn]] void Fail(j_common_ptr cinfo) {
  auto* st = reinterpret_cast<ErrorState*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, st->message);
  std::longjmp(st->jump, 1);
}

// Warnings: a cut-off file is an error (libjpeg would pad it with grey); other warnings are repairs.
void OnMessage(j_common_ptr cinfo, int level) {
  if (level < 0 && cinfo->err->msg_code == JWRN_JPEG_EOF) {
    auto* st = reinterpret_cast<ErrorState*>(cinfo->err);
    std::snprintf(st->message, sizeof st->message, "premature end of JPEG image");
    std::longjmp(st->jump, 1);
  }
}

void OnProgress(j_common_ptr cinfo) {
  auto* d = reinterpret_cast<j_decompress_ptr>(cinfo);
  if (d->progressive_mode && d->input_scan_number > kMaxScans) {
    auto* st = reinterpret_cast<ErrorState*>(cinfo->err);
    std::snprintf(st->message, sizeof st->message, "more than %d progressive scans", kMaxScans);
    std::longjmp(st->jump, 1);
  }
}

std::string Lower(const char* s) {
  std::string out(s);
  if (!out.empty() && out[0] >= 'A' && out[0] <= 'Z') out[0] = static_cast<char>(out[0] - 'A' + 'a');
  return out;
}

// The two steps that call into libjpeg. Each returns false after a libjpeg error (its message in st->message);
// only libjpeg calls and plain values live between a setjmp and the longjmp back to it.
bool ReadHeader(ErrorState* st, jpeg_decompress_struct* cinfo, const uint8_t* data, size_t size) {
  if (setjmp(st->jump)) return false;
  jpeg_mem_src(cinfo, data, static_cast<unsigned long>(size));
  jpeg_read_header(cinfo, TRUE);
  return true;
}

// The output size for a shrink (what jpeg_start_decompress will make), with RGB out.
bool PlanOutput(ErrorState* st, jpeg_decompress_struct* cinfo, int shrink) {
  if (setjmp(st->jump)) return false;
  cinfo->out_color_space = JCS_RGB;
  cinfo->scale_num = 1;
  cinfo->scale_denom = static_cast<unsigned int>(shrink);
  jpeg_calc_output_dimensions(cinfo);
  return true;
}

// Rows a photo stored turned is read in before they are placed upright (OrientRows): one strip of stored rows
// rather than a stored copy of the whole image.
constexpr int kStripRows = 64;

// Decodes into out (width x height x 3, upright). With orientation 2-8 the stored rows go through `strip`
// (kStripRows rows of width pixels) and are placed upright; otherwise straight into out.
bool ReadPixels(ErrorState* st, jpeg_decompress_struct* cinfo, uint8_t* out, JDIMENSION width, JDIMENSION height,
                int orientation, uint8_t* strip) {
  if (setjmp(st->jump)) return false;
  jpeg_start_decompress(cinfo);
  if (cinfo->output_width != width || cinfo->output_height != height || cinfo->output_components != 3) {
    std::snprintf(st->message, sizeof st->message, "unexpected output geometry");
    return false;
  }
  const size_t stride = static_cast<size_t>(width) * 3;
  if (strip == nullptr) {
    while (cinfo->output_scanline < height) {
      JSAMPROW row = out + static_cast<size_t>(cinfo->output_scanline) * stride;
      jpeg_read_scanlines(cinfo, &row, 1);
    }
  } else {
    while (cinfo->output_scanline < height) {
      const JDIMENSION y0 = cinfo->output_scanline;
      JDIMENSION n = 0;
      while (n < static_cast<JDIMENSION>(kStripRows) && cinfo->output_scanline < height) {
        JSAMPROW row = strip + static_cast<size_t>(n) * stride;
        n += jpeg_read_scanlines(cinfo, &row, 1);
      }
      OrientRows(strip, static_cast<int>(y0), static_cast<int>(n), static_cast<int>(width), static_cast<int>(height),
                 orientation, out);
    }
  }
  jpeg_finish_decompress(cinfo);
  return true;
}

}  // namespace

bool IsJpegShrink(int shrink) { return shrink == 1 || shrink == 2 || shrink == 4 || shrink == 8; }

JpegStatus DecodeJpegRgb(const uint8_t* data, size_t size, int64_t max_pixels, JpegImage* out, std::string* reason,
                         JpegTarget target, int shrink, int orientation) {
  ErrorState st{};
  jpeg_decompress_struct cinfo{};
  cinfo.err = jpeg_std_error(&st.mgr);
  st.mgr.error_exit = Fail;
  st.mgr.emit_message = OnMessage;
  st.progress.progress_monitor = OnProgress;
  jpeg_create_decompress(&cinfo);
  cinfo.progress = &st.progress;
  JpegStatus status = JpegStatus::kFailed;
  if (!ReadHeader(&st, &cinfo, data, size)) {
    *reason = Lower(st.message);
  } else if (cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK) {
    status = JpegStatus::kUnsupported;
    *reason = "CMYK";
  } else if (const int64_t pixels = static_cast<int64_t>(cinfo.image_width) * static_cast<int64_t>(cinfo.image_height);
             pixels <= 0 || pixels > max_pixels) {
    *reason = "image of " + std::to_string(pixels) + " pixels is over the limit of " + std::to_string(max_pixels);
  } else if (!IsJpegShrink(shrink)) {
    *reason = "a shrink of " + std::to_string(shrink) + " (1, 2, 4 or 8 are made while decoding)";
  } else if (!PlanOutput(&st, &cinfo, shrink)) {
    *reason = Lower(st.message);
  } else {
    const int w = static_cast<int>(cinfo.output_width), h = static_cast<int>(cinfo.output_height);
    const bool turned = orientation >= 2 && orientation <= 8;
    out->width = OrientationSwapsSides(orientation) ? h : w;
    out->height = OrientationSwapsSides(orientation) ? w : h;
    const size_t bytes = static_cast<size_t>(w) * static_cast<size_t>(h) * 3;
    out->in_target = target.data != nullptr && target.size >= bytes;
    if (!out->in_target) out->rgb.resize(bytes);
    uint8_t* dst = out->in_target ? target.data : out->rgb.data();
    // A turned photo is decoded a strip of stored rows at a time, each placed upright where the caller reads it.
    std::vector<uint8_t> strip(turned ? static_cast<size_t>(w) * 3 * kStripRows : 0);
    if (ReadPixels(&st, &cinfo, dst, cinfo.output_width, cinfo.output_height, orientation,
                   turned ? strip.data() : nullptr)) {
      status = JpegStatus::kOk;
    } else {
      *reason = Lower(st.message);
      out->rgb.clear();
      out->in_target = false;
    }
  }
  jpeg_destroy_decompress(&cinfo);
  return status;
}

}  // namespace sightflow::image
